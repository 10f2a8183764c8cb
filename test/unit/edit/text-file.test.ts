import { describe, expect, it } from "vitest";
import {
  assertTextContent,
  decodeText,
  decodeTextFile,
  encodeText,
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

describe("decodeText and encodeText (the text editors)", () => {
  const latin1 = Buffer.from("caf\xe9 cr\xe8me br\xfbl\xe9e\r\n\xa9 2024\n", "latin1");

  it("reads UTF-8 as UTF-8 and other mostly printable text as Latin-1", () => {
    expect(decodeText(Buffer.from("héllo\n"), "u.txt")).toEqual({ text: "héllo\n", encoding: "utf8" });
    expect(decodeText(latin1, "l.txt")).toEqual({
      text: "café crème brûlée\r\n© 2024\n",
      encoding: "latin1",
    });
  });

  it("writes Latin-1 back byte for byte", () => {
    const { text, encoding } = decodeText(latin1, "l.txt");
    expect(Buffer.from(encodeText(text, encoding, "l.txt", "new_string"))).toEqual(latin1);
    const edited = encodeText(text.replace("café", "thé à"), encoding, "l.txt", "new_string");
    expect(Buffer.from(edited).toString("latin1")).toBe(text.replace("café", "thé à"));
    expect(edited.length).toBe(latin1.length + 1); // one byte per character
  });

  it("refuses characters Latin-1 cannot hold, naming the parameter and the way out", () => {
    expect(() => encodeText("price: 5 €", "latin1", "/workspace/l.txt", "new_str")).toThrow(
      /^new_str: has "€" \(U\+20AC\), which \/workspace\/l\.txt cannot hold: it is Latin-1 .*iconv -f latin1 -t utf-8/,
    );
    expect(() => encodeText("price: 5 €", "utf8", "u.txt", "new_str")).not.toThrow();
  });

  it("still refuses NUL bytes and bytes that are mostly not text", () => {
    expect(() => decodeText(Buffer.from([0x61, 0x00, 0x62]), "a.bin")).toThrow(/NUL/);
    const noise = Buffer.from(Array.from({ length: 200 }, (_, i) => (i % 2 ? 0x01 : 0xff)));
    expect(() => decodeText(noise, "x.bin")).toThrow(/neither UTF-8 nor mostly printable Latin-1/);
  });
});
