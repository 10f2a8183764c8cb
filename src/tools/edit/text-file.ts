import { BinaryFileError } from "../../util/errors.js";

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
