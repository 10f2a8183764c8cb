import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { excludeLine, splitDependencyTrees } from "../../../src/workspace/dependency-trees.js";

const many = (dir: string, n: number) => Array.from({ length: n }, (_, i) => `${dir}/f${i}.js`);

describe("splitDependencyTrees", () => {
  it("leaves out trees known by name at any depth, the outermost one counted", () => {
    const untracked = [
      ...many("node_modules/a", 3),
      "node_modules/a/node_modules/b/index.js",
      ...many("web/node_modules", 2),
      "src/__pycache__/m.cpython-312.pyc",
      ".tox/py312/bin/python",
      ".mypy_cache/3.12/x.json",
      "bower_components/jquery/jquery.js",
      ".gradle/8.5/fileHashes.lock",
      "src/main.ts",
      "notes.txt",
    ];
    const split = splitDependencyTrees(untracked);
    expect(split.kept).toEqual(["src/main.ts", "notes.txt"]);
    expect(split.trees).toEqual([
      { dir: ".gradle/", files: 1 },
      { dir: ".mypy_cache/", files: 1 },
      { dir: ".tox/", files: 1 },
      { dir: "bower_components/", files: 1 },
      { dir: "node_modules/", files: 4 },
      { dir: "src/__pycache__/", files: 1 },
      { dir: "web/node_modules/", files: 2 },
    ]);
    expect(split.leftOut).toHaveLength(untracked.length - 2);
  });

  it("leaves out an ambiguous name only with its tool's marker in it, untracked too", () => {
    const untracked = [
      ".venv/pyvenv.cfg",
      ".venv/lib/python3.12/site-packages/six.py",
      "venv/notes.md", // no pyvenv.cfg: a directory that happens to be called venv
      "py/venv/pyvenv.cfg",
      "py/venv/bin/python",
      "target/CACHEDIR.TAG",
      "target/debug/app",
      "docs/target/index.md", // no CACHEDIR.TAG: someone's target audience notes
      "vendor/modules.txt",
      "vendor/golang.org/x/mod/go.mod",
      "php/vendor/composer/installed.json",
      "php/vendor/autoload.php",
      "lib/vendor/jquery.js", // hand-vendored code: kept
      "pyvenv.cfg/venv/x", // the marker's name as a directory elsewhere means nothing
    ];
    const split = splitDependencyTrees(untracked);
    expect(split.trees.map((t) => t.dir)).toEqual([
      ".venv/",
      "php/vendor/",
      "py/venv/",
      "target/",
      "vendor/",
    ]);
    expect(split.kept).toEqual([
      "venv/notes.md",
      "docs/target/index.md",
      "lib/vendor/jquery.js",
      "pyvenv.cfg/venv/x",
    ]);
  });

  it("takes nothing but untracked paths: a file named like a tree is no tree, and a marker must be inside", () => {
    // A file called node_modules (no slash after it) is a file; a marker beside the directory is not in it.
    const split = splitDependencyTrees(["node_modules", "pyvenv.cfg", ".venv/bin/python", "x/target"]);
    expect(split.trees).toEqual([]);
    expect(split.kept).toEqual(["node_modules", "pyvenv.cfg", ".venv/bin/python", "x/target"]);
  });

  it("only ever removes paths: what it keeps and leaves out together are exactly what it was given", () => {
    const untracked = [...many("node_modules", 5), ...many("a/b/c", 5), "target/CACHEDIR.TAG", "x"];
    const split = splitDependencyTrees(untracked);
    expect([...split.kept, ...split.leftOut].sort()).toEqual([...untracked].sort());
  });

  it("never leaves out a directory whose name no exclude line can hold (a line break)", () => {
    const split = splitDependencyTrees([
      "a\nb/node_modules/x.js",
      "c\r/node_modules/y.js",
      "node_modules/z.js",
    ]);
    expect(split.trees).toEqual([{ dir: "node_modules/", files: 1 }]);
    expect(split.kept).toEqual(["a\nb/node_modules/x.js", "c\r/node_modules/y.js"]);
  });
});

describe("excludeLine", () => {
  it("names exactly the one directory, as git reads it, whatever glob characters its path holds", () => {
    const dir = mkdtempSync(join(tmpdir(), "drydock-exclude-"));
    try {
      execFileSync("git", ["init", "-q", dir]);
      const trees = [
        "node_modules/",
        "we*rd/node_modules/",
        "a?[b]\\c/.venv/",
        "#x/node_modules/",
        "!y/target/",
      ];
      const exclude = trees.map(excludeLine).join("\n") + "\n";
      const check = (path: string) => {
        try {
          execFileSync("git", [
            "-C",
            dir,
            "-c",
            `core.excludesFile=${join(dir, "ex")}`,
            "check-ignore",
            "-q",
            "--no-index",
            path,
          ]);
          return true;
        } catch {
          return false;
        }
      };
      execFileSync("sh", ["-c", 'cat > "$1"', "sh", join(dir, "ex")], { input: exclude });
      for (const tree of trees) expect(check(`${tree}f.js`), tree).toBe(true);
      // Neighbours a glob reading would also have matched, and the same name deeper, are not.
      for (const other of [
        "weXrd/node_modules/f.js",
        "aXb\\c/.venv/f.js",
        "ab\\c/.venv/f.js",
        "sub/node_modules/f.js",
        "x/target/f",
      ]) {
        expect(check(other), other).toBe(false);
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
