import { describe, expect, it } from "vitest";
import { gitDirPaths } from "../../../src/eval/box-patch.js";

describe("gitDirPaths", () => {
  it("finds paths in a .git directory in git's and plain unified diff's headers", () => {
    const patch = [
      "diff --git a/calc.py b/calc.py",
      "--- a/calc.py",
      "+++ b/calc.py",
      "@@ -1 +1 @@",
      "-x",
      "+y",
      "diff --git a/.git/info/exclude b/.git/info/exclude",
      "--- a/.git/info/exclude",
      "+++ b/.git/info/exclude",
      "--- sub/.GIT/hooks/pre-commit",
      "+++ sub/.GIT/hooks/pre-commit",
      "rename from a.txt",
      "rename to vendor/.git/config",
      "",
    ].join("\n");
    expect(gitDirPaths(patch).sort()).toEqual([
      ".git/info/exclude",
      "sub/.GIT/hooks/pre-commit",
      "vendor/.git/config",
    ]);
  });

  it("lets through names that only look alike, and hunk lines that mention .git", () => {
    const patch = [
      "--- a/.gitignore",
      "+++ b/.gitignore",
      "@@ -1 +1,2 @@",
      " x",
      "+--- a/.git/config",
      "--- a/docs/.github/x.md",
      "+++ /dev/null",
      "",
    ].join("\n");
    expect(gitDirPaths(patch)).toEqual([]);
  });
});
