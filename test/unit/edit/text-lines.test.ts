import { describe, expect, it } from "vitest";
import {
  countLines,
  dominantEnding,
  lineNumberAt,
  splitLines,
  toEnding,
  usesOnlyCrlf,
} from "../../../src/tools/edit/text-lines.js";

describe("splitLines", () => {
  it("keeps each line's ending, including a missing last one", () => {
    expect(splitLines("a\r\nb\nc")).toEqual({ lines: ["a", "b", "c"], endings: ["\r\n", "\n", ""] });
  });

  it("gives no lines for empty text and one empty line for a lone newline", () => {
    expect(splitLines("").lines).toEqual([]);
    expect(splitLines("\n")).toEqual({ lines: [""], endings: ["\n"] });
  });

  it("leaves a lone carriage return inside the line", () => {
    expect(splitLines("a\rb\n").lines).toEqual(["a\rb"]);
  });
});

describe("countLines", () => {
  it.each([
    ["", 0],
    ["a", 1],
    ["a\n", 1],
    ["a\nb", 2],
    ["a\n\n", 2],
    ["\r\n\r\n", 2],
  ])("counts %j as %i lines", (text, n) => {
    expect(countLines(text)).toBe(n);
    expect(splitLines(text).lines).toHaveLength(n);
  });
});

describe("line endings", () => {
  it("finds the dominant ending", () => {
    expect(dominantEnding("a\r\nb\r\nc\n")).toBe("\r\n");
    expect(dominantEnding("a\nb\nc\r\n")).toBe("\n");
    expect(dominantEnding("no newline")).toBe("\n");
  });

  it("tells a pure CRLF file from a mixed one", () => {
    expect(usesOnlyCrlf("a\r\nb\r\n")).toBe(true);
    expect(usesOnlyCrlf("a\r\nb\n")).toBe(false);
    expect(usesOnlyCrlf("abc")).toBe(false);
  });

  it("rewrites bare LFs to CRLF without doubling existing CRs", () => {
    expect(toEnding("a\nb\r\nc", "\r\n")).toBe("a\r\nb\r\nc");
    expect(toEnding("a\nb", "\n")).toBe("a\nb");
  });

  it("finds the line of an offset", () => {
    const text = "ab\ncd\nef";
    expect(lineNumberAt(text, 0)).toBe(1);
    expect(lineNumberAt(text, 2)).toBe(1);
    expect(lineNumberAt(text, 3)).toBe(2);
    expect(lineNumberAt(text, 7)).toBe(3);
  });
});
