import { describe, expect, it } from "vitest";
import { MAX_JSON_DEPTH, scanJson } from "../../../src/tools/edit/json-scan.js";
import { InvalidJsonError } from "../../../src/util/errors.js";

function failure(text: string): InvalidJsonError {
  try {
    scanJson(text);
  } catch (error) {
    if (error instanceof InvalidJsonError) return error;
    throw error;
  }
  throw new Error(`expected ${JSON.stringify(text)} to be refused`);
}

describe("scanJson", () => {
  it.each([
    '{"a": [1, 2.5e-3, -0, true, false, null, "s\\u00e9\\n"]}',
    "[]",
    "{}",
    '"x"',
    "0",
    " \n null \n",
    '\ufeff{"bom": 1}',
  ])("accepts %j as JSON.parse does", (text) => {
    expect(() => scanJson(text)).not.toThrow();
  });

  it.each([
    ['{"a": 1,}', 1, 9, /trailing comma before "}"/],
    ['{\n  "a": 1\n  "b": 2\n}', 3, 3, /expected ',' or '}'/],
    ["{'a': 1}", 1, 2, /single quote/],
    ['{"a": 1} // note', 1, 10, /comments are not allowed/],
    ['{"a": tru}', 1, 7, /expected a value/],
    ['{"a": 01}', 1, 8, /expected ',' or '}'/],
    ['["unterminated]', 1, 2, /unterminated string/],
    ['["tab\there"]', 1, 6, /control character/],
    ['{"a" 1}', 1, 6, /expected ':'/],
    ['{"a": 1', 1, 8, /ends inside an object/],
    ["", 1, 1, /no JSON value/],
    ["{} []", 1, 4, /after the end of the JSON value/],
    ['["\\x"]', 1, 3, /bad escape/],
  ])("refuses %j at line %i column %i", (text, line, column, detail) => {
    const error = failure(text);
    expect(error.line).toBe(line);
    expect(error.column).toBe(column);
    expect(error.message).toMatch(detail);
    expect(error.message).toContain(`line ${line} column ${column}`);
  });

  it("finds duplicate keys with both positions, per object", () => {
    const scan = scanJson('{\n  "a": 1,\n  "b": {"a": 2},\n  "a": 3\n}');
    expect(scan.duplicates).toEqual([
      { key: "a", first: { line: 2, column: 3 }, again: { line: 4, column: 3 } },
    ]);
  });

  it("compares decoded keys, so escapes cannot hide a duplicate", () => {
    expect(scanJson('{"a": 1, "\\u0061": 2}').duplicates).toHaveLength(1);
  });

  it("finds numbers a rewrite would change, and leaves exact ones alone", () => {
    const scan = scanJson(
      "[12345678901234567890, 1.0, 1e3, 0.1, 1.5e300, 1e400, 0.30000000000000004, 9007199254740993]",
    );
    expect(scan.inexactNumbers.map((n) => n.literal)).toEqual([
      "12345678901234567890",
      "1e400",
      "9007199254740993",
    ]);
  });

  it("refuses nesting past the limit without overflowing the stack", () => {
    const deep = `${"[".repeat(100_000)}${"]".repeat(100_000)}`;
    expect(failure(deep).message).toMatch(new RegExp(`deeper than ${MAX_JSON_DEPTH} levels`));
    const ok = `${"[".repeat(MAX_JSON_DEPTH)}${"]".repeat(MAX_JSON_DEPTH)}`;
    expect(() => scanJson(ok)).not.toThrow();
  });
});
