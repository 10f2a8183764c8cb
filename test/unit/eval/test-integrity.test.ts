import { describe, expect, it } from "vitest";
import { integrityOf, touchedPaths } from "../../../src/eval/test-integrity.js";

const edit = (path: string) =>
  `diff --git a/${path} b/${path}\nindex 1111111..2222222 100644\n--- a/${path}\n+++ b/${path}\n@@ -1 +1 @@\n-a\n+b\n`;
const rename = "diff --git a/old.py b/new.py\nsimilarity index 100%\nrename from old.py\nrename to new.py\n";

describe("test integrity", () => {
  it("lists both sides of a rename among the paths a diff touches", () => {
    expect(touchedPaths(edit("b.py") + rename)).toEqual(["b.py", "new.py", "old.py"]);
    expect(touchedPaths("")).toEqual([]);
  });

  it("names the test patch's files the agent changed, and its files outside editable_files", () => {
    const agent = edit("calc.py") + edit("tests/test_calc.py") + edit("setup.cfg");
    expect(integrityOf(agent, edit("tests/test_calc.py"), ["calc.py", "./setup.cfg"])).toEqual({
      test_files_restored: ["tests/test_calc.py"],
      outside_editable_files: ["tests/test_calc.py"],
    });
    // Without editable_files nothing is outside them; without a test patch nothing is restored.
    expect(integrityOf(agent, undefined)).toEqual({ test_files_restored: [], outside_editable_files: [] });
  });
});
