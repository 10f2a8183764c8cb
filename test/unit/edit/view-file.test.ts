import { describe, expect, it } from "vitest";
import { viewFile } from "../../../src/tools/edit/view-file.js";
import { BinaryFileError, InvalidArgumentError } from "../../../src/util/errors.js";

const five = "one\ntwo\nthree\nfour\nfive\n";

describe("viewFile", () => {
  it("numbers lines as cat -n does", () => {
    const view = viewFile("a\n\tb\n", "/workspace/f");
    expect(view.text).toBe("     1\ta\n     2\t\tb");
    expect(view).toMatchObject({ totalLines: 2, firstLine: 1, lastLine: 2, truncated: false });
  });

  it("shows a range, with -1 meaning to the end", () => {
    expect(viewFile(five, "f", [2, 3]).text).toBe("     2\ttwo\n     3\tthree");
    expect(viewFile(five, "f", [4, -1]).text).toBe("     4\tfour\n     5\tfive");
    expect(viewFile(five, "f", [5, 5]).lastLine).toBe(5);
  });

  it("strips CRLF endings from the shown lines and counts a last line without newline", () => {
    const view = viewFile("a\r\nb", "f");
    expect(view.text).toBe("     1\ta\n     2\tb");
    expect(view.totalLines).toBe(2);
    expect(viewFile("a\r\nb\r\nc\r\nd", "f", [2, 3]).text).toBe("     2\tb\n     3\tc");
    expect(viewFile("a\nb\r", "f", [2, -1]).text).toBe("     2\tb\r");
  });

  it.each([
    [[0, 2], /start 0 is out of range.*has 5 lines/],
    [[6, -1], /start 6 is out of range/],
    [[3, 2], /end 2 is before start 3/],
    [[2, 9], /end 9 is past the last line/],
    [[1], /two whole numbers/],
    [[1.5, 2], /two whole numbers/],
  ])("refuses view_range %j with a clear error", (range, message) => {
    const attempt = () => viewFile(five, "f", range);
    expect(attempt).toThrow(InvalidArgumentError);
    expect(attempt).toThrow(message);
    expect(attempt).toThrow(/^view_range: /);
  });

  it("says an empty file is empty, and refuses a range on it", () => {
    expect(viewFile("", "/workspace/e").text).toBe("[/workspace/e is empty]");
    expect(() => viewFile("", "/workspace/e", [1, 1])).toThrow(/is empty/);
  });

  it("caps long views and says how to see the rest", () => {
    const text = Array.from({ length: 50 }, (_, i) => `line ${i + 1}`).join("\n");
    const view = viewFile(text, "f", undefined, { maxLines: 10 });
    expect(view.truncated).toBe(true);
    expect(view.lastLine).toBe(10);
    expect(view.text).toContain("    10\tline 10");
    expect(view.text).not.toContain("line 11");
    expect(view.text).toMatch(/lines 11-50 of 50 not shown.*view_range \[11, 20\]/);
  });

  it("caps by characters too", () => {
    const text = `${"x".repeat(100)}\n`.repeat(100);
    const view = viewFile(text, "f", undefined, { maxChars: 1_000 });
    expect(view.lastLine).toBe(9);
    expect(view.text.length).toBeLessThan(1_300);
  });

  it("cuts a single huge line instead of showing nothing", () => {
    const view = viewFile("y".repeat(1_000_000), "min.js", undefined, { maxChars: 5_000 });
    expect(view.lastLine).toBe(1);
    expect(view.text).toMatch(/line 1 is 1000000 characters long and was cut at 5000/);
    expect(view.text.length).toBeLessThan(5_300);
  });

  it("keeps a 50 MB view within the default cap", () => {
    const text = "0123456789abcdef\n".repeat(3_000_000);
    const view = viewFile(text, "big.log");
    expect(view.text.length).toBeLessThan(300 * 1024);
    expect(view.truncated).toBe(true);
    expect(view.totalLines).toBe(3_000_000);
  });

  it("refuses binary content", () => {
    expect(() => viewFile("PNG\0\0\0", "logo.png")).toThrow(BinaryFileError);
  });

  it("keeps unicode intact", () => {
    expect(viewFile("héllo 😀\n", "u").text).toBe("     1\théllo 😀");
  });
});
