import { describe, expect, it } from "vitest";
import { extractBody } from "../../../src/tools/search/extract-body.js";

describe("extractBody", () => {
  it("uses the end line when given, clamped to the file", () => {
    expect(extractBody("a\nb\nc\nd\n", 2, 3)).toEqual({
      text: "b\nc",
      startLine: 2,
      endLine: 3,
      truncated: false,
    });
    expect(extractBody("a\nb\n", 1, 99).endLine).toBe(2);
  });

  it("matches braces, ignoring ones in strings and comments", () => {
    const text = "int f(void) {\n  char *s = \"{\";\n  // }\n  /* } */\n  return '}';\n}\nint g;\n";
    expect(extractBody(text, 1).endLine).toBe(6);
  });

  it("skips braces in parameters when finding the body", () => {
    const text = "function f({ a, b } = {}) {\n  return a;\n}\nnext();\n";
    expect(extractBody(text, 1).endLine).toBe(3);
  });

  it("follows a multi-line template literal", () => {
    const text = "const f = () => {\n  return `\n}\n`;\n};\nafter\n";
    expect(extractBody(text, 1).endLine).toBe(5);
  });

  it("ends a declaration at its semicolon", () => {
    expect(extractBody("int decl(int);\nint other;\n", 1).endLine).toBe(1);
  });

  it("takes an indented block after a colon, dropping trailing blank lines", () => {
    const text = "class A:\n    def f(self):\n        return 1\n\n    x = 2\n\ndef after():\n    pass\n";
    expect(extractBody(text, 1).endLine).toBe(5);
    expect(extractBody(text, 2).endLine).toBe(3);
  });

  it("handles a Python signature spread over lines", () => {
    const text = "def f(\n    a,\n    b,\n) -> int:  # note\n    return a\nx = 1\n";
    expect(extractBody(text, 1).endLine).toBe(5);
  });

  it("returns just the line when it cannot tell", () => {
    expect(extractBody("x = 1\ny = 2\n", 1).endLine).toBe(1);
  });

  it("cuts long bodies by lines and by characters", () => {
    const long = `function f() {\n${"  x();\n".repeat(500)}}\n`;
    expect(extractBody(long, 1)).toMatchObject({ startLine: 1, endLine: 200, truncated: true });
    const wide = `function f() { ${"y".repeat(100_000)} }\n`;
    const cut = extractBody(wide, 1, undefined, { maxChars: 1_000 });
    expect(cut.text).toHaveLength(1_000);
    expect(cut.truncated).toBe(true);
  });

  it("stays bounded on an unclosed brace", () => {
    const text = `function f() {\n${"a\n".repeat(10_000)}`;
    expect(extractBody(text, 1)).toMatchObject({ endLine: 200, truncated: true });
  });

  it("keeps CRLF files' lines clean", () => {
    expect(extractBody("f() {\r\n  x;\r\n}\r\n", 1).text).toBe("f() {\n  x;\n}");
  });

  it("refuses a line outside the file", () => {
    expect(() => extractBody("a\n", 5)).toThrow(/^line: 5 is outside the file \(1 lines\)/);
  });
});
