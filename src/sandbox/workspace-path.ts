/**
 * Path confinement, as pure string logic: a path the caller gives is taken relative to
 * /workspace (or absolute under it), normalised, and refused if it leaves. Symlinks are resolved
 * in the box afterwards and the result is checked again with `assertInWorkspace`.
 */
import { posix } from "node:path";
import { InvalidArgumentError, PathOutsideWorkspaceError } from "../util/errors.js";
import { WORKSPACE } from "./box-profile.js";

export function resolveWorkspacePath(input: string, field = "path"): string {
  if (typeof input !== "string" || input.trim() === "") {
    throw new InvalidArgumentError(field, "must be a non-empty path under /workspace");
  }
  if (input.includes("\0")) throw new PathOutsideWorkspaceError(input, "it contains a NUL byte");
  const absolute = posix.isAbsolute(input) ? input : posix.join(WORKSPACE, input);
  const normal = posix.normalize(absolute).replace(/\/+$/, "") || "/";
  assertInWorkspace(normal, input);
  return normal;
}

export function isInWorkspace(absolute: string): boolean {
  return absolute === WORKSPACE || absolute.startsWith(WORKSPACE + "/");
}

export function assertInWorkspace(absolute: string, original: string = absolute): void {
  if (!isInWorkspace(absolute)) throw new PathOutsideWorkspaceError(original);
}

/** The path relative to /workspace ("" for the root). */
export function relativeToWorkspace(absolute: string): string {
  return absolute === WORKSPACE ? "" : absolute.slice(WORKSPACE.length + 1);
}
