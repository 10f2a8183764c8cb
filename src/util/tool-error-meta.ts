/**
 * What an `isError` tool reply carries besides its message, so a program on the other side of MCP
 * (the library's remote flavour) can raise the same error class with the same code as in-process.
 */
import { DrydockError, InvalidArgumentError } from "./errors.js";

/** The key under the reply's `_meta`. */
export const ERROR_META_KEY = "drydock/error";

export interface ErrorMeta {
  /** DrydockError's code, e.g. "path_outside_workspace". */
  code: string;
  /** The error class's name, e.g. "PathOutsideWorkspaceError". */
  name: string;
  /** For an InvalidArgumentError: the argument it names. */
  field?: string;
}

/** The meta of one of our own errors; undefined for anything else (a bug has no code to pass on). */
export function errorMeta(error: unknown): ErrorMeta | undefined {
  if (!(error instanceof DrydockError)) return undefined;
  const meta: ErrorMeta = { code: error.code, name: error.name };
  if (error instanceof InvalidArgumentError) meta.field = error.field;
  return meta;
}
