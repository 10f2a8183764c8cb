import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";

/** Small sources in every language code_search maps, with known definitions and line numbers. */
export const SOURCES: Readonly<Record<string, string>> = {
  "web/greeter.ts": `export function topLevel(a: number): number {
  return a + 1;
}
export const arrow = (x: string) => x.length;
export class Greeter<T> extends Base implements I {
  private name: string;
  constructor(name: string) { this.name = name; }
  greet(other: string): string {
    const s = "}";
    return \`hi \${other}\`;
  }
}
export interface Shape { area(): number; }
export enum Color { Red, Green }
namespace NS { export function inner() {} }
`,
  "web/widget.js": `function plain(a, b) {
  return a + b;
}
class Widget {
  render() {
    return { a: 1 };
  }
}
const handlers = {
  onClick: (e) => e,
};
`,
  "py/animal.py": `import os

def helper(x, y=2):
    """doc"""
    return x + y

class Animal(object):
    kind = "x"

    def __init__(self, name):
        self.name = name

    @property
    def speak(self):
        def nested():
            return 1

        return nested()

async def fetch():
    pass
`,
  "go/server.go": `package main

type Server struct {
	addr string
}

func NewServer(addr string) *Server {
	return &Server{addr: addr}
}

func (s *Server) Start() error {
	return nil
}
`,
  "rust/point.rs": `pub struct Point { x: i32, y: i32 }
pub trait Shape { fn area(&self) -> f64; }
impl Point {
    pub fn new(x: i32, y: i32) -> Self {
        Point { x, y }
    }
}
impl Shape for Point {
    fn area<'a>(&'a self) -> f64 {
        0.0
    }
}
fn main() {
    let p = Point::new(1, 2);
}
`,
  "java/F.java": `package com.example;
public class F {
    private int count;
    public int getCount() {
        return count;
    }
    static class Inner { void run() {} }
}
`,
  "c/point.c": `#include <stdio.h>
struct point { int x; int y; };
typedef struct { int a; } anon_t;
static int add(int a, int b) {
    return a + b;
}
int main(void) { return add(1, 2); }
`,
  "cpp/circle.cpp": `namespace geo {
class Circle {
public:
    Circle(double r);
    double area() const;
private:
    double r_;
};
double Circle::area() const {
    return 3.14 * r_ * r_;
}
}
int free_fn(int x) { return x; }
`,
  "node_modules/dep/index.js": "function plain() {}\n",
  ".git/hooks/x.js": "function plain() {}\n",
};

/** Writes SOURCES under a fresh temp dir; returns it and a cleanup. */
export function writeFixtures(): { root: string; cleanup: () => void } {
  const root = mkdtempSync(join(tmpdir(), "drydock-search-"));
  for (const [path, text] of Object.entries(SOURCES)) {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), text);
  }
  return { root, cleanup: () => rmSync(root, { recursive: true, force: true }) };
}

/** Runs an argv and returns its stdout. */
export function run(argv: readonly string[]): string {
  const [command, ...args] = argv;
  return execFileSync(command as string, args, {
    encoding: "utf8",
    stdio: ["ignore", "pipe", "ignore"],
    maxBuffer: 64 * 1024 * 1024,
  });
}
