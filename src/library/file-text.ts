/**
 * A file read from a box, as files.read returns it: decoded the way the text editor decodes
 * (UTF-8, else Latin-1; binary refused) and refused whole past the editor's 8 MiB, the same in
 * both flavours.
 */
import type { FileRead } from "../tools/box-files.js";
import { decodeText } from "../tools/edit/text-file.js";
import { MAX_EDIT_BYTES } from "../tools/file-editor.js";
import { LimitExceededError } from "../util/errors.js";

/** Most bytes files.read returns (8 MiB, the editor's limit). */
export const MAX_READ_BYTES = MAX_EDIT_BYTES;

/** The text of a read of at most MAX_READ_BYTES; throws when the file was bigger or is binary. */
export function fileText(read: FileRead): string {
  if (read.truncated) {
    throw new LimitExceededError(
      `${read.path} is ${(read.size / 1024 / 1024).toFixed(1)} MB, over the ${MAX_READ_BYTES / 1024 / 1024} MB files.read returns; read it in parts with commands.run (head -c, sed -n) instead`,
    );
  }
  return decodeText(read.data, read.path).text;
}
