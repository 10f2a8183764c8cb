/**
 * A tool's error reply, raised again as the error class and code the tool threw on the server,
 * so code written against the in-process flavour catches the same errors from `serve --http`.
 */
import { IsDirectoryError } from "../tools/box-files.js";
import {
  ApplyConflictError,
  BinaryFileError,
  BoxGoneError,
  CommandExitError,
  CommandTimeoutError,
  DrydockError,
  EngineUnavailableError,
  FlagError,
  ImageMissingError,
  InvalidArgumentError,
  InvalidJsonError,
  LimitExceededError,
  NotFoundError,
  PathOutsideWorkspaceError,
  SessionNotFoundError,
  TaskStackError,
  UnsafeDiffError,
} from "../util/errors.js";
import { ERROR_META_KEY, type ErrorMeta } from "../util/tool-error-meta.js";

/** Our error classes by name; the ones a session's tools throw. */
const CLASSES: Record<string, { prototype: DrydockError }> = Object.fromEntries(
  [
    ApplyConflictError,
    BinaryFileError,
    BoxGoneError,
    CommandExitError,
    CommandTimeoutError,
    EngineUnavailableError,
    FlagError,
    ImageMissingError,
    InvalidArgumentError,
    InvalidJsonError,
    IsDirectoryError,
    LimitExceededError,
    NotFoundError,
    PathOutsideWorkspaceError,
    SessionNotFoundError,
    TaskStackError,
    UnsafeDiffError,
  ].map((c) => [c.name, c]),
);

/** The code a reply without drydock's meta gets: a server that does not send it, or a failure that is no error of ours. */
export const UNKNOWN_TOOL_ERROR = "tool_error";

/** The meta an `isError` reply carries under `_meta`, when it is well formed. */
export function errorMetaOf(reply: { _meta?: unknown }): ErrorMeta | undefined {
  const meta = (reply._meta as Record<string, unknown> | undefined)?.[ERROR_META_KEY] as
    Partial<ErrorMeta> | undefined;
  if (typeof meta?.code !== "string" || typeof meta.name !== "string") return undefined;
  return { code: meta.code, name: meta.name, field: typeof meta.field === "string" ? meta.field : undefined };
}

/**
 * The error a tool's `isError` reply stands for: an instance of the class the server threw (by
 * name, so `instanceof` works), with the server's message and code; a DrydockError with code
 * "tool_error" when the reply carries no meta.
 */
export function errorFromToolReply(message: string, meta: ErrorMeta | undefined): DrydockError {
  const error = new DrydockError(meta?.code ?? UNKNOWN_TOOL_ERROR, message);
  const known = meta !== undefined && Object.hasOwn(CLASSES, meta.name) ? CLASSES[meta.name] : undefined;
  if (meta === undefined || known === undefined) return error;
  // The constructors build their own messages from parts the reply does not carry; the server's
  // message is kept as it is and the instance given the class (and the field it names).
  Object.setPrototypeOf(error, known.prototype);
  error.name = meta.name;
  if (error instanceof InvalidArgumentError && meta.field !== undefined) {
    Object.defineProperty(error, "field", { value: meta.field, enumerable: true });
  }
  return error;
}
