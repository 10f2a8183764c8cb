import { describe, expect, it } from "vitest";
import { insertAt } from "../../../src/tools/edit/insert-at.js";
import { InvalidArgumentError } from "../../../src/util/errors.js";

describe("insertAt", () => {
  it("inserts after the given line", () => {
    const edit = insertAt("a\nb\n", 1, "x");
    expect(edit.text).toBe("a\nx\nb\n");
    expect([edit.startLine, edit.endLine]).toEqual([2, 2]);
  });

  it("inserts at the top with 0 and at the end with the line count", () => {
    expect(insertAt("a\nb\n", 0, "top\n").text).toBe("top\na\nb\n");
    expect(insertAt("a\nb\n", 2, "end").text).toBe("a\nb\nend\n");
  });

  it("inserts several lines and reports their span", () => {
    const edit = insertAt("a\n", 1, "x\ny\nz\n");
    expect(edit.text).toBe("a\nx\ny\nz\n");
    expect([edit.startLine, edit.endLine]).toEqual([2, 4]);
  });

  it("keeps a missing trailing newline missing when appending", () => {
    expect(insertAt("a\nb", 2, "c")).toMatchObject({ text: "a\nb\nc", startLine: 3, endLine: 3 });
    expect(insertAt("a\nb", 1, "x").text).toBe("a\nx\nb");
  });

  it("uses the file's CRLF endings for the new lines", () => {
    expect(insertAt("a\r\nb\r\n", 1, "x\ny").text).toBe("a\r\nx\r\ny\r\nb\r\n");
    expect(insertAt("a\r\nb", 2, "c\n").text).toBe("a\r\nb\r\nc");
  });

  it("inserts into an empty file", () => {
    expect(insertAt("", 0, "first")).toMatchObject({ text: "first\n", startLine: 1, endLine: 1 });
  });

  it("keeps tabs and unicode as they are", () => {
    expect(insertAt("a\n", 1, "\tß 😀").text).toBe("a\n\tß 😀\n");
  });

  it.each([-1, 3, 1.5, Number.NaN])("refuses line_number %s with the valid range", (n) => {
    const attempt = () => insertAt("a\nb\n", n, "x");
    expect(attempt).toThrow(InvalidArgumentError);
    expect(attempt).toThrow(/^line_number: .* has 2 lines, so pass 0 \(insert at the top\) to 2/);
  });

  it("refuses empty content", () => {
    expect(() => insertAt("a\n", 0, "")).toThrow(/^content: is empty/);
  });
});
