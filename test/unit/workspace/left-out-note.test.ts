import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { leftOutNote, sizeLeftOut, TreeSizes } from "../../../src/workspace/left-out-note.js";

describe("leftOutNote", () => {
  it("names each tree with its files and bytes, largest first, and the flag and option that copy them", () => {
    const note = leftOutNote([
      { dir: ".venv/", files: 3, bytes: 2048 },
      { dir: "node_modules/", files: 10_953, bytes: 120 * 1_048_576 },
    ]);
    expect(note).toContain("node_modules/ (10,953 files, 120.0 MiB), .venv/ (3 files, 2.0 KiB)");
    expect(note).toContain("--include-untracked-dependencies");
    expect(note).toContain("includeUntrackedDependencies: true");
  });

  it("escapes names a repository chose, and sums what is past the first five", () => {
    const trees = Array.from({ length: 7 }, (_, i) => ({
      dir: `p${i}\x1b]0;owned\x07/node_modules/`,
      files: 10 - i,
      bytes: 1024,
    }));
    const note = leftOutNote(trees);
    expect(note).not.toMatch(/[\x00-\x1f]/);
    expect(note).toContain("p0\\e]0;owned\\x07/node_modules/ (10 files, 1.0 KiB)");
    expect(note).toContain("2 more (9 files, 2.0 KiB)");
  });
});

describe("sizeLeftOut", () => {
  it("adds the bytes of each tree's files by lstat, a link counted as a link and never followed", async () => {
    const root = mkdtempSync(join(tmpdir(), "drydock-size-"));
    try {
      mkdirSync(join(root, "node_modules", "a"), { recursive: true });
      writeFileSync(join(root, "node_modules", "a", "x.js"), "x".repeat(1000));
      writeFileSync(join(root, "big"), "y".repeat(100_000));
      symlinkSync(join(root, "big"), join(root, "node_modules", "link"));
      const sizes = new TreeSizes();
      const leftOut = {
        trees: [{ dir: "node_modules/", files: 3 }],
        paths: ["node_modules/a/x.js", "node_modules/link", "node_modules/gone.js"],
      };
      const first = [{ dir: "node_modules/", files: 3, bytes: 1000 + join(root, "big").length }];
      expect(await sizeLeftOut(root, leftOut, sizes)).toEqual(first);
      // Sized once per file count: the same count is not read again, another one is.
      writeFileSync(join(root, "node_modules", "a", "x.js"), "x".repeat(5000));
      expect(await sizeLeftOut(root, leftOut, sizes)).toEqual(first);
      writeFileSync(join(root, "node_modules", "gone.js"), "z");
      const grown = {
        trees: [{ dir: "node_modules/", files: 4 }],
        paths: [...leftOut.paths, "node_modules/a/y.js"],
      };
      expect(await sizeLeftOut(root, grown, sizes)).toEqual([
        { dir: "node_modules/", files: 4, bytes: 5000 + join(root, "big").length + 1 },
      ]);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});
