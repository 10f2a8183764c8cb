import { describe, expect, it } from "vitest";
import {
  assertTextContent,
  decodeTextFile,
  encodeTextFile,
  looksBinary,
} from "../../../src/tools/edit/text-file.js";
import { BinaryFileError } from "../../../src/util/errors.js";

describe("binary detection", () => {
  it("flags a NUL in the first 8 KB only", () => {
    expect(looksBinary("abc\0def")).toBe(true);
    expect(looksBinary(`${"x".repeat(9_000)}\0`)).toBe(false);
    expect(looksBinary("plain text\twith tabs\n")).toBe(false);
  });

  it("refuses binary text with a message naming the path and the next step", () => {
    expect(() => assertTextContent("\0\x01\x02", "/workspace/logo.png")).toThrow(BinaryFileError);
    expect(() => assertTextContent("\0", "/workspace/logo.png")).toThrow(
      /\/workspace\/logo\.png looks like a binary file.*xxd/,
    );
  });
});

describe("decodeTextFile", () => {
  it("round-trips UTF-8 text, a BOM included", () => {
    const text = "\ufeffhé 😀\r\n";
    const bytes = encodeTextFile(text);
    expect(decodeTextFile(bytes, "f")).toBe(text);
  });

  it("refuses NUL bytes and invalid UTF-8", () => {
    expect(() => decodeTextFile(new Uint8Array([0x61, 0x00, 0x62]), "a.bin")).toThrow(/NUL/);
    expect(() => decodeTextFile(new Uint8Array([0x61, 0xff, 0xfe, 0x62]), "latin1.txt")).toThrow(
      /not valid UTF-8/,
    );
  });
});
