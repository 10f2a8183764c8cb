import { describe, expect, it } from "vitest";
import { aiderFiles } from "../../../src/tools/aider/aider-files.js";
import { InvalidArgumentError, PathOutsideWorkspaceError } from "../../../src/util/errors.js";

describe("aiderFiles", () => {
  it("takes paths relative to the repository root or absolute under /workspace", () => {
    expect(aiderFiles(["greet.py", "/workspace/src/a.py", "./src/../b.py"], ["docs/x.md"])).toEqual({
      editable: ["greet.py", "src/a.py", "b.py"],
      readonly: ["docs/x.md"],
    });
  });

  it("refuses paths that leave /workspace, naming the field and index", () => {
    expect(() => aiderFiles(["../etc/passwd"])).toThrow(PathOutsideWorkspaceError);
    expect(() => aiderFiles(["ok.py"], ["ok.md", "/etc/shadow"])).toThrow(/\/etc\/shadow/);
    expect(() => aiderFiles([""])).toThrow(/relative_editable_files\[0\]/);
  });

  it("refuses an empty editable list, the root itself and .git", () => {
    expect(() => aiderFiles([])).toThrow(InvalidArgumentError);
    expect(() => aiderFiles([])).toThrow(/relative_editable_files: is empty/);
    expect(() => aiderFiles(["."])).toThrow(/repository root/);
    expect(() => aiderFiles([".git/config"])).toThrow(/inside \.git/);
  });

  it("lists each file once and leaves editable files out of the read-only list", () => {
    expect(aiderFiles(["a.py", "./a.py"], ["a.py", "b.py", "b.py"])).toEqual({
      editable: ["a.py"],
      readonly: ["b.py"],
    });
  });
});
