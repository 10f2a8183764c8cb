import { posix, win32 } from "node:path";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  assertChangesFitBase,
  assertDiffIsSafe,
  DEFAULT_MAX_DIFF_BYTES,
  isGitDirName,
} from "../../../src/workspace/diff-safety.js";
import { UnsafeDiffError } from "../../../src/util/errors.js";
import { addFile, copyFile, editFile, renameFile } from "./diff-builders.js";

function refusal(diff: string, options = {}): string {
  try {
    assertDiffIsSafe(diff, options);
  } catch (error) {
    expect(error).toBeInstanceOf(UnsafeDiffError);
    return (error as Error).message;
  }
  throw new Error("the diff was accepted");
}

describe("assertDiffIsSafe", () => {
  it("accepts ordinary changes and returns them", () => {
    const changes = assertDiffIsSafe(
      addFile("src/a.ts") + editFile("README.md", "a", "b") + renameFile("x.txt", "y z.txt"),
    );
    expect(changes.map((c) => [c.status, c.path])).toEqual([
      ["added", "src/a.ts"],
      ["modified", "README.md"],
      ["renamed", "y z.txt"],
    ]);
  });

  it.each([
    ["an absolute path", "/etc/passwd"],
    ["a parent-directory path", "../outside.txt"],
    ["a path that climbs out midway", "src/../../outside.txt"],
    ["a Windows-style climb", "src\\..\\..\\outside.txt"],
    ["a hook", ".git/hooks/pre-commit"],
    ["upper-case .GIT", ".GIT/config"],
    ["a nested .git", "sub/.git/config"],
    ["an NTFS .git alias", ".git./config"],
    ["an 8.3 .git alias", "GIT~1/config"],
    ["an HFS+ .git alias", ".g\u200cit/config"],
    ["a dot component", "./a.txt"],
    ["a double slash", "a//b.txt"],
    ["a NUL byte", "a\0b"],
    ["a newline", "a\nb"],
  ])("refuses %s", (_what, path) => {
    expect(refusal(addFile(path))).toMatch(/refused before anything was applied/);
  });

  it("refuses an empty path", () => {
    expect(refusal('diff --git "a/" "b/"\nnew file mode 100644\n')).toMatch(/empty|header/);
  });

  it("refuses renames and copies that reach outside or into .git", () => {
    expect(refusal(renameFile("a.txt", "../a.txt"))).toMatch(/could leave the repository/);
    expect(refusal(renameFile("a.txt", ".git/config"))).toMatch(/\.git/);
    expect(refusal(copyFile("../../home/user/.ssh/id_rsa", "key.txt"))).toMatch(/could leave the repository/);
  });

  it("refuses a symlink created and a file written through it, in either order", () => {
    const link = addFile("link", "/etc", "120000");
    const through = addFile("link/passwd", "root::0:0:::");
    for (const diff of [link + through, through + link]) {
      for (const allowSymlinks of [false, true]) {
        expect(refusal(diff, { allowSymlinks })).toMatch(/"link\/passwd" goes through the symlink "link"/);
      }
    }
  });

  it("refuses a write through a symlink whose name differs only in case", () => {
    expect(refusal(addFile("LINK", "x", "120000") + addFile("link/x"), { allowSymlinks: true })).toMatch(
      /through the symlink/,
    );
  });

  it("refuses a symlink to a sibling whose name starts with the repository's", () => {
    const link = addFile("link", "../repo-sibling", "120000");
    expect(refusal(link + addFile("link/pwned"), { allowSymlinks: true })).toMatch(/through the symlink/);
    expect(refusal(link, { allowSymlinks: true })).toMatch(/outside the repository/);
    expect(refusal(link)).toMatch(/symlinks from a box are refused/);
  });

  it("refuses symlinks by default and accepts in-repository ones with allowSymlinks", () => {
    const link = addFile("docs/readme", "../README.md", "120000");
    expect(refusal(link)).toMatch(
      /symlinks from a box are refused \(one could point anywhere on the host\); remove it in the box/,
    );
    expect(assertDiffIsSafe(link, { allowSymlinks: true })[0]).toMatchObject({
      path: "docs/readme",
      newMode: "120000",
    });
  });

  it("refuses a symlink retargeted in place, named only by its index line", () => {
    const retarget = editFile("docs/readme", "../README.md", "/home/user/.ssh", "120000");
    expect(refusal(retarget)).toMatch(/symlink "docs\/readme"/);
    expect(refusal(retarget, { allowSymlinks: true })).toMatch(/outside the repository/);
  });

  it("refuses a symlink hunk that keeps old lines it does not show", () => {
    const head = "diff --git a/l b/l\nindex 2222222..3333333 120000\n--- a/l\n+++ b/l\n";
    const appended = head + "@@ -2,0 +3 @@\n+inside\n\\ No newline at end of file\n";
    const withContext = head + "@@ -1,2 +1,2 @@\n-../..\n+x\n \n";
    for (const diff of [appended, withContext]) {
      expect(refusal(diff, { allowSymlinks: true })).toMatch(/cannot read the target/);
    }
    const whole =
      head + "@@ -1 +1 @@\n-old\n\\ No newline at end of file\n+inside\n\\ No newline at end of file\n";
    expect(assertDiffIsSafe(whole, { allowSymlinks: true })[0]?.singleNewLine).toBe("inside");
  });

  it("refuses symlinks into .git and symlinked .gitmodules even with allowSymlinks", () => {
    expect(refusal(addFile("hooks", ".git/hooks", "120000"), { allowSymlinks: true })).toMatch(/into \.git/);
    expect(refusal(addFile(".gitmodules", "x", "120000"), { allowSymlinks: true })).toMatch(
      /may not be a symlink/,
    );
  });

  it("accepts deleting a symlink", () => {
    const diff =
      "diff --git a/link b/link\ndeleted file mode 120000\nindex 1111111..0000000\n--- a/link\n+++ /dev/null\n" +
      "@@ -1 +0,0 @@\n-target\n\\ No newline at end of file\n";
    expect(assertDiffIsSafe(diff)).toMatchObject([{ status: "deleted", path: "link", oldMode: "120000" }]);
  });

  it("refuses a gitlink", () => {
    const sha = "a".repeat(40);
    expect(refusal(addFile("vendor/lib", `Subproject commit ${sha}`, "160000"))).toMatch(/submodule/);
  });

  it("refuses a diff over the size cap, naming its size and the option", () => {
    expect(DEFAULT_MAX_DIFF_BYTES).toBe(20 * 1024 * 1024);
    const huge = addFile("big.txt", "x".repeat(DEFAULT_MAX_DIFF_BYTES));
    expect(refusal(huge)).toMatch(/the diff is 20\.0 MB \(\d+ bytes\), over the 20\.0 MB cap; .*maxBytes/);
    expect(refusal(addFile("a.txt"), { maxBytes: 10 })).toMatch(/over the 0\.0 MB cap/);
  });

  it("refuses a header that names another path than its ---/+++ lines", () => {
    const diff =
      "diff --git a/notes.txt b/notes.txt\nnew file mode 100644\nindex 0000000..1111111\n--- /dev/null\n" +
      "+++ b/src/main.ts\n@@ -0,0 +1 @@\n+x\n";
    expect(refusal(diff)).toMatch(/header does not match/);
    const renamed = "diff --git a/a.txt b/b.txt\nsimilarity index 100%\nrename from c.txt\nrename to b.txt\n";
    expect(refusal(renamed)).toMatch(/header does not match/);
  });

  it("refuses a path written twice", () => {
    expect(refusal(addFile("a.txt") + addFile("a.txt"))).toMatch(/written by two file sections/);
  });
});

describe("assertChangesFitBase", () => {
  const base = new Map([
    ["out", "120000"],
    ["vendor/lib", "160000"],
    ["docs/readme", "120000"],
    ["src", "040000"],
    ["src/a.ts", "100644"],
  ]);
  const fit = (diff: string, options = {}) =>
    assertChangesFitBase(assertDiffIsSafe(diff, options), (p) => base.get(p), options);

  it("refuses writing through a symlink the repository already has", () => {
    expect(() => fit(addFile("out/stolen.txt"))).toThrow(/goes through the symlink "out"/);
  });

  it("refuses writing inside a submodule", () => {
    expect(() => fit(addFile("vendor/lib/x.c"))).toThrow(/submodule/);
  });

  it("sees a symlink behind a rename that does not name its mode", () => {
    expect(() => fit(renameFile("docs/readme", "docs/guide"))).toThrow(/symlink "docs\/guide"/);
    expect(() => fit(renameFile("docs/readme", "docs/guide"), { allowSymlinks: true })).toThrow(
      /cannot read the target/,
    );
  });

  it("refuses a declared mode that contradicts the repository", () => {
    expect(() => fit(editFile("docs/readme", "a", "b", "100644"))).toThrow(/the repository has 120000/);
  });

  it("accepts replacing a symlink by a directory in the same diff", () => {
    const deleteOut =
      "diff --git a/out b/out\ndeleted file mode 120000\nindex 1111111..0000000\n--- a/out\n+++ /dev/null\n" +
      "@@ -1 +0,0 @@\n-../x\n\\ No newline at end of file\n";
    expect(() => fit(deleteOut + addFile("out/file.txt"))).not.toThrow();
    expect(() => fit(editFile("src/a.ts", "a", "b"))).not.toThrow();
  });
});

describe("path rules (property)", () => {
  const piece = fc.constantFrom(
    "a",
    "b",
    ".",
    "..",
    "/",
    "\\",
    ".git",
    ".GIT",
    "git~1",
    " ",
    "ä",
    "\0",
    "\n",
    '"',
    "c:",
    "x.",
    "\u200c",
  );
  const pathArb = fc.array(piece, { minLength: 0, maxLength: 8 }).map((parts) => parts.join(""));

  function escapes(path: string): boolean {
    const posixResolved = posix.resolve("/repo", path);
    const winResolved = win32.resolve("C:\\repo", path);
    const inside = posixResolved.startsWith("/repo/") && winResolved.toLowerCase().startsWith("c:\\repo\\");
    const components = posixResolved.slice("/repo/".length).split(/[\\/]/);
    return (
      !inside ||
      path.startsWith("/") ||
      components.some(isGitDirName) ||
      components.some((c) => c.toLowerCase() === ".git")
    );
  }

  it("never accepts a new file whose path escapes or reaches .git", () => {
    fc.assert(
      fc.property(pathArb, (path) => {
        let accepted: string | undefined;
        try {
          accepted = assertDiffIsSafe(addFile(path))[0]?.path;
        } catch (error) {
          if (!(error instanceof UnsafeDiffError)) throw error;
        }
        if (accepted !== undefined) {
          expect(accepted).toBe(path);
          expect(escapes(path)).toBe(false);
        }
      }),
      { numRuns: 3000 },
    );
  });

  it("never accepts a rename whose either side escapes", () => {
    fc.assert(
      fc.property(pathArb, pathArb, (from, to) => {
        try {
          assertDiffIsSafe(renameFile(from, to));
        } catch (error) {
          if (error instanceof UnsafeDiffError) return;
          throw error;
        }
        expect(escapes(from) || escapes(to)).toBe(false);
      }),
      { numRuns: 3000 },
    );
  });

  it("accepts the ordinary paths it should", () => {
    for (const path of ["a", "a/b.txt", "ä b/c d.txt", "x.git/y", ".github/workflows/ci.yml", "a..b/c"]) {
      expect(assertDiffIsSafe(addFile(path))[0]?.path).toBe(path);
    }
  });
});
