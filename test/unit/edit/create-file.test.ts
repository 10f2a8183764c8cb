import { describe, expect, it } from "vitest";
import { createFile } from "../../../src/tools/edit/create-file.js";
import { InvalidArgumentError } from "../../../src/util/errors.js";

describe("createFile", () => {
  it("creates a new file and shows its start", () => {
    const created = createFile(undefined, "a\nb\n", { path: "/workspace/n.txt" });
    expect(created).toMatchObject({ text: "a\nb\n", startLine: 1, endLine: 2, overwritten: false });
    expect(created.snippet).toBe("     1\ta\n     2\tb");
  });

  it("refuses to replace an existing file unless asked", () => {
    const attempt = () => createFile("old\n", "new\n", { path: "/workspace/x" });
    expect(attempt).toThrow(InvalidArgumentError);
    expect(attempt).toThrow(/^path: \/workspace\/x already exists \(1 lines\).*overwrite: true/);
    expect(createFile("old\n", "new\n", { path: "/workspace/x", overwrite: true })).toMatchObject({
      text: "new\n",
      overwritten: true,
    });
  });

  it("treats an existing empty file as existing", () => {
    expect(() => createFile("", "x", { path: "e" })).toThrow(/already exists/);
  });

  it("creates an empty file", () => {
    expect(createFile(undefined, "", { path: "e" })).toMatchObject({ text: "", snippet: "" });
  });

  it("refuses NUL characters", () => {
    expect(() => createFile(undefined, "a\0b", { path: "e" })).toThrow(/^content: contains NUL/);
  });
});
