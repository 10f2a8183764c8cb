/**
 * The `ref` a client may name: a branch, a tag, HEAD, or a full or abbreviated commit id, and
 * nothing of git's revision syntax. A revision expression reaches what a client was never shown:
 * `HEAD@{1}` brings back a commit the user removed with `reset --hard`, `main:path` a blob,
 * `:/text` a search of every commit message, `a..b` a range. Pure: the grammar here, resolution in
 * snapshot-plan.ts (by exact ref names, never git's guessing).
 */
import { InvalidArgumentError } from "../util/errors.js";

/** What a `ref` may be, for messages. */
export const REF_FORMS =
  "give a branch or tag name (main, v1.2, refs/heads/main, origin/main), HEAD, or a commit id (4 to 64 hex digits); revision syntax such as @{…}, ^, ~, : or .. is not accepted";

export type ClientRef =
  { kind: "head" } | { kind: "name"; name: string } | { kind: "id"; hex: string; alsoName: string };

const HEX = /^[0-9a-f]{4,64}$/i;
/** A ref name's characters: a strict subset of what git allows (no controls, spaces, ~^:?*[\ or @{). */
const NAME = /^[A-Za-z0-9_+][A-Za-z0-9._+/-]*$/;

/** Parses a client's ref, or throws an InvalidArgumentError (field `ref`, or `field`) naming the forms it may take. */
export function parseClientRef(ref: string, field = "ref"): ClientRef {
  const refuse = (why: string): never => {
    throw new InvalidArgumentError(field, `${JSON.stringify(ref)} ${why}; ${REF_FORMS}`);
  };
  if (ref === "HEAD") return { kind: "head" };
  if (ref.length === 0 || ref.length > 255) refuse("is not a branch, tag or commit id");
  if (!NAME.test(ref)) refuse("is not a branch, tag or commit id");
  const parts = ref.split("/");
  if (
    ref.includes("..") ||
    ref.endsWith("/") ||
    ref.endsWith(".") ||
    parts.some((p) => p === "" || p.startsWith(".") || p.endsWith(".lock"))
  ) {
    refuse("is not a valid branch or tag name");
  }
  if (ref.startsWith("refs/") && !/^refs\/(heads|tags|remotes)\/./.test(ref)) {
    refuse("names a ref outside refs/heads, refs/tags and refs/remotes");
  }
  if (HEX.test(ref)) return { kind: "id", hex: ref.toLowerCase(), alsoName: ref };
  return { kind: "name", name: ref };
}

/** The full ref names a short name may stand for, in the order a match is taken. */
export function refCandidates(name: string): string[] {
  if (name.startsWith("refs/")) return [name];
  return [`refs/heads/${name}`, `refs/tags/${name}`, `refs/remotes/${name}`];
}
