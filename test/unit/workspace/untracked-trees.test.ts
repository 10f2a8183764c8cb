import { describe, expect, it } from "vitest";
import { largeUntrackedTrees, untrackedTreesNote } from "../../../src/workspace/untracked-trees.js";

const many = (dir: string, n: number) => Array.from({ length: n }, (_, i) => `${dir}/f${i}.js`);

describe("largeUntrackedTrees", () => {
  it("names the top-level directories holding many untracked files, largest first", () => {
    const paths = [...many("node_modules/a", 1500), ...many(".venv", 1000), ...many("src", 999), "notes.txt"];
    expect(largeUntrackedTrees(paths)).toEqual([
      { dir: "node_modules/", files: 1500 },
      { dir: ".venv/", files: 1000 },
    ]);
    expect(largeUntrackedTrees(many("src", 10))).toEqual([]);
  });

  it("says how much was copied and how to leave the directory out, its name escaped", () => {
    const note = untrackedTreesNote([{ dir: "node_modules/", files: 12345 }], {
      files: 12400,
      bytes: 190 * 1_048_576,
    });
    expect(note).toContain("node_modules/ (12,345 files) is neither tracked nor ignored");
    expect(note).toContain("sent 12,400 files (190.0 MiB) from the host");
    expect(note).toContain("add node_modules/ to .gitignore (or to .git/info/exclude");
    const hostile = untrackedTreesNote([{ dir: "x\x1b]0;owned\x07\r/", files: 2000 }], {
      files: 2000,
      bytes: 0,
    });
    expect(hostile).not.toMatch(/[\x00-\x1f]/);
    expect(hostile).toContain("x\\e]0;owned\\x07\\r/");
  });
});
