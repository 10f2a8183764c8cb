import { readFileSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ctagsCommand } from "../../../src/tools/search/ctags-command.js";
import { type Definition, parseCtagsJson } from "../../../src/tools/search/ctags-json.js";
import { extractBody } from "../../../src/tools/search/extract-body.js";
import { findDefinitions, type SearchCommand } from "../../../src/tools/search/find-definitions.js";
import { run, writeFixtures } from "./fixtures.js";

const { root, cleanup } = writeFixtures();
let definitions: Definition[] = [];
beforeAll(() => {
  definitions = parseCtagsJson(run(ctagsCommand(root)));
});
afterAll(cleanup);

const where = (command: SearchCommand, identifier: string) =>
  findDefinitions(definitions, command, identifier).matches.map(
    (d) => `${d.path.slice(root.length + 1)}:${d.line} ${d.kind}`,
  );

const body = (command: SearchCommand, identifier: string) => {
  const [found] = findDefinitions(definitions, command, identifier).matches;
  if (found === undefined) throw new Error(`${identifier} not found`);
  return extractBody(readFileSync(found.path, "utf8"), found.line, found.end).text;
};

describe("search_function", () => {
  it.each([
    ["topLevel", ["web/greeter.ts:1 function"]],
    ["arrow", ["web/greeter.ts:4 constant"]],
    ["inner", ["web/greeter.ts:15 function"]],
    ["plain", ["web/widget.js:1 function"]],
    ["helper", ["py/animal.py:3 function"]],
    ["nested", ["py/animal.py:15 function"]],
    ["fetch", ["py/animal.py:20 function"]],
    ["NewServer", ["go/server.go:7 func"]],
    ["main", ["c/point.c:7 function", "rust/point.rs:13 function"]],
    ["add", ["c/point.c:4 function"]],
    ["free_fn", ["cpp/circle.cpp:13 function"]],
  ])("finds %s", (identifier, expected) => {
    expect(where("search_function", identifier)).toEqual(expected);
  });

  it("does not return methods, and says where they are", () => {
    const search = findDefinitions(definitions, "search_function", "greet");
    expect(search.matches).toEqual([]);
    expect(search.hint).toMatch(
      /1 method\(s\): Greeter\.greet \(method\) at .*greeter\.ts:8\. Use search_class_method/,
    );
  });

  it("accepts a qualifier matched against the scope", () => {
    expect(where("search_function", "NS.inner")).toEqual(["web/greeter.ts:15 function"]);
    expect(where("search_function", "Other.inner")).toEqual([]);
  });
});

describe("search_class", () => {
  it.each([
    ["Greeter", ["web/greeter.ts:5 class"]],
    ["Shape", ["rust/point.rs:2 interface", "web/greeter.ts:13 interface"]],
    ["Color", ["web/greeter.ts:14 enum"]],
    ["Widget", ["web/widget.js:4 class"]],
    ["Animal", ["py/animal.py:7 class"]],
    ["Server", ["go/server.go:3 struct"]],
    ["Point", ["rust/point.rs:1 struct", "rust/point.rs:3 implementation", "rust/point.rs:8 implementation"]],
    ["F", ["java/F.java:2 class"]],
    ["F.Inner", ["java/F.java:7 class"]],
    ["point", ["c/point.c:2 struct"]],
    ["anon_t", ["c/point.c:3 typedef"]],
    ["geo::Circle", ["cpp/circle.cpp:2 class"]],
  ])("finds %s", (identifier, expected) => {
    expect(where("search_class", identifier)).toEqual(expected);
  });

  it("points at search_function for a function name", () => {
    expect(findDefinitions(definitions, "search_class", "helper").hint).toMatch(/Use search_function/);
  });
});

describe("search_class_method", () => {
  it.each([
    ["Greeter.greet", ["web/greeter.ts:8 method"]],
    ["constructor", ["web/greeter.ts:7 method"]],
    ["Shape.area", ["rust/point.rs:2 method", "web/greeter.ts:13 method"]],
    ["Widget#render", ["web/widget.js:5 method"]],
    ["onClick", ["web/widget.js:10 property"]],
    ["Animal.speak", ["py/animal.py:14 member"]],
    ["__init__", ["py/animal.py:10 member"]],
    ["Server.Start", ["go/server.go:11 func"]],
    ["Point::new", ["rust/point.rs:4 method"]],
    ["Point.area", ["rust/point.rs:9 method"]],
    ["F.getCount", ["java/F.java:4 method"]],
    ["Inner.run", ["java/F.java:7 method"]],
    ["Circle::area", ["cpp/circle.cpp:9 function"]],
    ["geo::Circle.area", ["cpp/circle.cpp:9 function"]],
  ])("finds %s", (identifier, expected) => {
    expect(where("search_class_method", identifier)).toEqual(expected);
  });

  it("names the classes that do have the method when the class is wrong", () => {
    const search = findDefinitions(definitions, "search_class_method", "Widget.greet");
    expect(search.matches).toEqual([]);
    expect(search.hint).toMatch(/belong to other classes: Greeter\.greet/);
  });

  it("says plainly when nothing has the name", () => {
    expect(findDefinitions(definitions, "search_class_method", "Nope.nothing").hint).toMatch(
      /no definition named nothing was found/,
    );
  });
});

describe("identifier validation and limits", () => {
  it.each(["", "   ", "two words", "x".repeat(201)])("refuses %j", (identifier) => {
    expect(() => findDefinitions(definitions, "search_function", identifier)).toThrow(/^identifier: /);
  });

  it("refuses a dangling qualifier", () => {
    expect(() => findDefinitions(definitions, "search_class_method", "Greeter.")).toThrow(/^identifier: /);
  });

  it("caps the results and reports the total", () => {
    const many = Array.from({ length: 80 }, (_, i) => ({
      name: "f",
      kind: "function",
      path: `p${i}.c`,
      line: 1,
      language: "C",
    }));
    const search = findDefinitions(many, "search_function", "f", { maxResults: 10 });
    expect(search.matches).toHaveLength(10);
    expect(search.total).toBe(80);
  });
});

describe("bodies of real definitions", () => {
  it("uses ctags' end line where it has one (Go, Python, C, Java)", () => {
    expect(body("search_class_method", "Server.Start")).toBe(
      "func (s *Server) Start() error {\n\treturn nil\n}",
    );
    expect(body("search_function", "helper")).toBe('def helper(x, y=2):\n    """doc"""\n    return x + y');
    expect(body("search_function", "add")).toBe("static int add(int a, int b) {\n    return a + b;\n}");
  });

  it("matches braces where ctags gives no end (TypeScript, JavaScript, Rust)", () => {
    expect(body("search_class_method", "Greeter.greet")).toBe(
      '  greet(other: string): string {\n    const s = "}";\n    return `hi ${other}`;\n  }',
    );
    expect(body("search_class", "Widget")).toBe("class Widget {\n  render() {\n    return { a: 1 };\n  }\n}");
    expect(body("search_class_method", "Point.area")).toBe(
      "    fn area<'a>(&'a self) -> f64 {\n        0.0\n    }",
    );
    expect(body("search_function", "arrow")).toBe("export const arrow = (x: string) => x.length;");
  });
});
