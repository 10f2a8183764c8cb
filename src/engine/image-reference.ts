/**
 * Image references as the engine reads them: which registry an image comes from, and its full
 * name (`python:3.12` is `docker.io/library/python:3.12`), so an operator's allowlist entry and a
 * repository's reference are compared the same way the engine would resolve them. Pure.
 */

export interface ImageReference {
  /** The registry host (with port): "docker.io", "127.0.0.1:5000", "ghcr.io". */
  registry: string;
  /** The repository path within it: "library/python", "team/app". */
  path: string;
  tag?: string;
  /** "sha256:…", when the reference pins one. */
  digest?: string;
  /** registry/path[:tag][@digest], with docker.io's defaults filled in (no implied :latest). */
  full: string;
}

export const DOCKER_HUB = "docker.io";

/** Reads a reference; undefined when it is not one (spaces, upper case in the path, `..`). */
export function parseImageReference(ref: string): ImageReference | undefined {
  const at = ref.indexOf("@");
  const digest = at >= 0 ? ref.slice(at + 1) : undefined;
  const name = at >= 0 ? ref.slice(0, at) : ref;
  if (digest !== undefined && !/^[a-z0-9]+:[a-f0-9]+$/.test(digest)) return undefined;
  const slash = name.lastIndexOf("/");
  const colon = name.lastIndexOf(":");
  const tag = colon > slash ? name.slice(colon + 1) : undefined;
  const repo = colon > slash ? name.slice(0, colon) : name;
  if (tag !== undefined && !/^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$/.test(tag)) return undefined;
  const parts = repo.split("/");
  let registry = DOCKER_HUB;
  // As the engine reads it: a first part with a dot or a port, or "localhost", is a registry host.
  if (parts.length > 1 && (/[.:]/.test(parts[0]!) || parts[0] === "localhost")) {
    registry = parts.shift()!;
    if (!/^[a-zA-Z0-9.-]+(:\d+)?$/.test(registry)) return undefined;
  }
  if (registry === "index.docker.io") registry = DOCKER_HUB;
  if (parts.some((p) => !/^[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*$/.test(p))) return undefined;
  if (registry === DOCKER_HUB && parts.length === 1) parts.unshift("library");
  const path = parts.join("/");
  const full = `${registry}/${path}${tag !== undefined ? `:${tag}` : ""}${digest !== undefined ? `@${digest}` : ""}`;
  return {
    registry,
    path,
    ...(tag !== undefined ? { tag } : {}),
    ...(digest !== undefined ? { digest } : {}),
    full,
  };
}

/**
 * Whether an allowlist entry covers a reference: the same image (`python:3.12` covers
 * `docker.io/library/python:3.12`), or, for an entry ending in `/*`, every image under that
 * registry or path (`127.0.0.1:5000/*`, `ghcr.io/acme/*`). A bare `*` covers nothing.
 */
export function allowEntryCovers(entry: string, ref: string): boolean {
  const image = parseImageReference(ref);
  if (!image) return false;
  if (entry.endsWith("/*")) {
    const prefix = entry.slice(0, -2);
    if (!prefix) return false;
    // Read with two made-up segments after it, so `docker.io/*` stays the whole registry.
    const probe = parseImageReference(`${prefix}/x/x`);
    if (!probe) return false;
    const under = probe.full.slice(0, -"/x/x".length);
    return `${image.registry}/${image.path}`.startsWith(`${under}/`);
  }
  const allowed = parseImageReference(entry);
  if (!allowed) return false;
  if (allowed.full === image.full) return true;
  // An entry with no tag and no digest means the image's default tag, as the engine reads it.
  const withLatest = (r: ImageReference) =>
    r.tag === undefined && r.digest === undefined ? `${r.full}:latest` : r.full;
  return withLatest(allowed) === withLatest(image);
}
