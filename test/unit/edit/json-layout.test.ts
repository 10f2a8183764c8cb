import { describe, expect, it } from "vitest";
import { detectJsonLayout, formatJson } from "../../../src/tools/edit/json-layout.js";

describe("detectJsonLayout", () => {
  it.each([
    ['{\n  "a": 1\n}\n', 2, true],
    ['{\n    "a": 1\n}', 4, false],
    ['{\n\t"a": 1\n}\n', "\t", true],
    ['{"a":1}\n', 0, true],
    ['{"a":1}', 0, false],
    ['{\n"a": 1\n}', 2, false],
    ["[\n   1\n]", 3, false],
  ])("reads %j as indent %j, trailing newline %s", (text, indent, trailingNewline) => {
    expect(detectJsonLayout(text)).toMatchObject({ indent, trailingNewline });
  });

  it("notices CRLF endings and a BOM", () => {
    expect(detectJsonLayout('\ufeff{\r\n  "a": 1\r\n}\r\n')).toEqual({
      indent: 2,
      eol: "\r\n",
      trailingNewline: true,
      bom: true,
    });
  });
});

describe("formatJson", () => {
  it("round-trips a file in its own layout", () => {
    for (const text of [
      '{\n  "a": [\n    1,\n    2\n  ]\n}\n',
      '{\r\n\t"b": {\r\n\t\t"c": "x\\ny"\r\n\t}\r\n}',
      '\ufeff{"a":1}',
    ]) {
      expect(formatJson(JSON.parse(text.replace(/^\ufeff/, "")), detectJsonLayout(text))).toBe(text);
    }
  });
});
