import { BinaryFileError, InvalidArgumentError } from "../../util/errors.js";

/** How far into a file binary detection looks, as `git` and `grep` do. */
export const BINARY_SNIFF_CHARS = 8_192;

/** True when the start of the text holds a NUL character, the usual sign of a binary file. */
export function looksBinary(text: string): boolean {
  return text.slice(0, BINARY_SNIFF_CHARS).includes("\0");
}

/** Throws BinaryFileError when `text` looks binary; text edits call this before touching a file. */
export function assertTextContent(text: string, path = "the file"): void {
  if (looksBinary(text)) throw new BinaryFileError(path);
}

const decoder = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });
const encoder = new TextEncoder();

/**
 * Decodes a file's bytes for editing. Refuses NUL bytes in the first 8 KB and bytes that are not
 * UTF-8, since writing such a file back as text would corrupt it. A BOM is kept in the string.
 */
export function decodeTextFile(bytes: Uint8Array, path: string): string {
  if (bytes.subarray(0, BINARY_SNIFF_CHARS).includes(0)) throw new BinaryFileError(path);
  try {
    return decoder.decode(bytes);
  } catch {
    throw new BinaryFileError(path, "it is not valid UTF-8");
  }
}

/** Encodes edited text back to bytes (UTF-8, the BOM kept if the text has one). */
export function encodeTextFile(text: string): Uint8Array {
  return encoder.encode(text);
}

/** How a text file's bytes map to characters: UTF-8, or Latin-1 (one byte, one character). */
export type TextEncoding = "utf8" | "latin1";

/** A text file's characters and the encoding to write them back in. */
export interface DecodedText {
  readonly text: string;
  readonly encoding: TextEncoding;
}

/** Share of bytes that must be printable for a file that is not UTF-8 to count as Latin-1 text. */
const LATIN1_MIN_PRINTABLE = 0.95;

/**
 * Decodes a file for the text editors: valid UTF-8 is UTF-8; otherwise a file with no NUL bytes
 * whose bytes are mostly printable is Latin-1 (ISO-8859-1, each byte one character, so the bytes
 * round-trip exactly); anything else is refused as binary.
 */
export function decodeText(bytes: Uint8Array, path: string): DecodedText {
  if (bytes.subarray(0, BINARY_SNIFF_CHARS).includes(0)) throw new BinaryFileError(path);
  try {
    return { text: decoder.decode(bytes), encoding: "utf8" };
  } catch {
    if (printableShare(bytes) < LATIN1_MIN_PRINTABLE) {
      throw new BinaryFileError(path, "it is neither UTF-8 nor mostly printable Latin-1 text");
    }
    return {
      text: Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("latin1"),
      encoding: "latin1",
    };
  }
}

/**
 * Encodes edited text in the file's encoding. Latin-1 holds only U+0000 to U+00FF: text with
 * other characters throws InvalidArgumentError naming `field`, the parameter that brought them.
 */
export function encodeText(text: string, encoding: TextEncoding, path: string, field: string): Uint8Array {
  if (encoding === "utf8") return encoder.encode(text);
  const outside = /[^\u0000-\u00ff]/u.exec(text);
  if (outside !== null) {
    const char = outside[0];
    const code = char.codePointAt(0)!.toString(16).toUpperCase().padStart(4, "0");
    throw new InvalidArgumentError(
      field,
      `has ${JSON.stringify(char)} (U+${code}), which ${path} cannot hold: it is Latin-1 (ISO-8859-1) text, one byte per character. Use Latin-1 characters only, or convert the file to UTF-8 first (bash: iconv -f latin1 -t utf-8 FILE > FILE.new && mv FILE.new FILE). Nothing was changed`,
    );
  }
  return Buffer.from(text, "latin1");
}

/** Bytes that are text: tab, line breaks, form feed, printable ASCII and everything from 0x80. */
function printableShare(bytes: Uint8Array): number {
  if (bytes.length === 0) return 1;
  let printable = 0;
  for (const b of bytes) {
    if (b >= 0x20 ? b !== 0x7f : b === 0x09 || b === 0x0a || b === 0x0c || b === 0x0d) printable++;
  }
  return printable / bytes.length;
}
