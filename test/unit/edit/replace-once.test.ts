import { describe, expect, it } from "vitest";
import { replaceOnce } from "../../../src/tools/edit/replace-once.js";
import { BinaryFileError, InvalidArgumentError } from "../../../src/util/errors.js";

describe("replaceOnce", () => {
  it("replaces the single match and reports the lines it wrote", () => {
    const edit = replaceOnce("a\nb\nc\n", "b", "B1\nB2");
    expect(edit.text).toBe("a\nB1\nB2\nc\n");
    expect([edit.startLine, edit.endLine]).toEqual([2, 3]);
    expect(edit.snippet).toBe("     1\ta\n     2\tB1\n     3\tB2\n     4\tc");
  });

  it("says how many matches there were, and on which lines, when there are several", () => {
    const attempt = () => replaceOnce("x = 1\ny = 2\nx = 1\n", "x = 1", "x = 3");
    expect(attempt).toThrow(InvalidArgumentError);
    expect(attempt).toThrow(/^old_string: matches 2 times .*lines 1, 3.*Add surrounding lines/);
  });

  it("counts overlapping matches as ambiguous", () => {
    expect(() => replaceOnce("aaa", "aa", "b")).toThrow(/matches 2 times/);
  });

  it("says zero matches and how to fix it", () => {
    expect(() => replaceOnce("abc\n", "xyz", "q")).toThrow(
      /^old_string: matches 0 times in the file\. View the file/,
    );
  });

  it("points at a near match that differs only in whitespace", () => {
    const text = "function f() {\n\treturn 1;\n}\n";
    expect(() => replaceOnce(text, "function f() {\n    return 1;\n}", "x", "/workspace/f.js")).toThrow(
      /matches 0 times in \/workspace\/f\.js \(a match that differs only in whitespace or indentation starts on line 1/,
    );
  });

  it("notices line numbers pasted from a view", () => {
    expect(() => replaceOnce("alpha\n", "     1\talpha", "beta")).toThrow(/line numbers copied from view/);
  });

  it("refuses an empty old_string and a no-op replacement", () => {
    expect(() => replaceOnce("abc", "", "x")).toThrow(/^old_string: is empty/);
    expect(() => replaceOnce("abc", "b", "b")).toThrow(/^new_string: is the same as old_string/);
  });

  it("treats $ patterns in new_string literally", () => {
    expect(replaceOnce("price\n", "price", "$& $1 $$").text).toBe("$& $1 $$\n");
  });

  it("matches LF text against a CRLF file and keeps its CRLF endings", () => {
    const edit = replaceOnce("one\r\ntwo\r\nthree\r\n", "one\ntwo\n", "uno\ndos\n");
    expect(edit.text).toBe("uno\r\ndos\r\nthree\r\n");
    expect(edit.startLine).toBe(1);
  });

  it("gives new lines in a CRLF file CRLF endings", () => {
    expect(replaceOnce("a\r\nb\r\n", "a", "x\ny").text).toBe("x\r\ny\r\nb\r\n");
  });

  it("matches CRLF text given with CR explicitly", () => {
    expect(replaceOnce("a\r\nb\r\n", "a\r\nb", "c").text).toBe("c\r\n");
  });

  it("keeps a missing trailing newline missing, and tabs as tabs", () => {
    expect(replaceOnce("\tx = 1", "x = 1", "x = 2").text).toBe("\tx = 2");
  });

  it("handles unicode, including astral characters", () => {
    const edit = replaceOnce("naïve 😀 text\nnext\n", "😀", "🎉");
    expect(edit.text).toBe("naïve 🎉 text\nnext\n");
    expect(edit.startLine).toBe(1);
  });

  it("deletes text when new_string is empty", () => {
    const edit = replaceOnce("a\nb\nc\n", "b\n", "");
    expect(edit.text).toBe("a\nc\n");
    expect([edit.startLine, edit.endLine]).toEqual([2, 2]);
  });

  it("reports the right lines for a match in the middle of a line", () => {
    const edit = replaceOnce("l1\nl2 foo l2\nl3\n", "foo", "bar\nbaz");
    expect([edit.startLine, edit.endLine]).toEqual([2, 3]);
  });

  it("copes with huge inputs and caps the match count it reports", () => {
    const text = "a".repeat(5_000_000);
    expect(() => replaceOnce(text, "a", "b")).toThrow(/matches more than 999 times/);
    const unique = `${"x\n".repeat(500_000)}needle\n${"y\n".repeat(500_000)}`;
    expect(replaceOnce(unique, "needle", "pin").startLine).toBe(500_001);
  });

  it("stays quick when hunting for a near match in a pathological file", () => {
    const text = "a\n".repeat(200_000);
    const old = `${"a\n".repeat(300)}b`;
    const started = Date.now();
    expect(() => replaceOnce(text, old, "c")).toThrow(/matches 0 times/);
    expect(Date.now() - started).toBeLessThan(5_000);
  });

  it("refuses binary files", () => {
    expect(() => replaceOnce("a\0b", "a", "c", "x.bin")).toThrow(BinaryFileError);
  });
});
