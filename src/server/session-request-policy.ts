/**
 * What a client may ask of a new session. The client may be the untrusted agent itself, so every
 * relaxation stays the operator's: a client may ask for no network or the network the server was
 * started with, limits up to the server's, and only a repository the server serves.
 */
import { realpath } from "node:fs/promises";
import { resolve, sep } from "node:path";
import { egressBeyondGrant } from "../gateway/egress-allowlist.js";
import { DEFAULT_LIMITS } from "../sandbox/box-profile.js";
import { InvalidArgumentError } from "../util/errors.js";
import { openHostRepo } from "../workspace/host-repo.js";

export interface SessionRequest {
  network?: string;
  /** Canonical egress rules (see parseEgressEntries). */
  egress?: readonly string[];
  memoryMB?: number;
  cpus?: number;
}

/** The server's own settings, from `drydock serve` (undefined: the box profile's default). */
export interface ServerGrants {
  network?: string;
  /** The hosts `drydock serve --egress` allows (none by default). */
  egress?: readonly string[];
  memoryMB?: number;
  cpus?: number;
}

/** Throws `InvalidArgumentError` naming the tool's field when a request goes past what the operator granted. */
export function assertWithinGrants(request: SessionRequest, grants: ServerGrants): void {
  const granted = grants.network ?? "none";
  if (request.network !== undefined && request.network !== "none" && request.network !== granted) {
    const allowed = granted === "none" ? '"none"' : `"none" or "${granted}"`;
    throw new InvalidArgumentError(
      "network",
      `${JSON.stringify(request.network)} is not a network this server grants (allowed: ${allowed}); ` +
        "networks are granted by whoever runs the server, with drydock serve --network NAME",
    );
  }
  const beyond = egressBeyondGrant(grants.egress ?? [], request.egress ?? []);
  if (beyond.length > 0) {
    const granted = grants.egress?.length ? grants.egress.join(", ") : "none";
    throw new InvalidArgumentError(
      "egress",
      `${beyond.join(", ")} ${beyond.length === 1 ? "is" : "are"} beyond the hosts this server lets boxes reach (allowed: ${granted}); ` +
        "ask for those or fewer; hosts are granted by whoever runs the server, with drydock serve --egress HOST",
    );
  }
  const memoryMB = grants.memoryMB ?? DEFAULT_LIMITS.memoryMB;
  if (request.memoryMB !== undefined && request.memoryMB > memoryMB) {
    throw new InvalidArgumentError(
      "memory_mb",
      `${request.memoryMB} is above this server's limit of ${memoryMB} MiB; ask for ${memoryMB} or less (the limit is set with drydock serve --memory-mb)`,
    );
  }
  const cpus = grants.cpus ?? DEFAULT_LIMITS.cpus;
  if (request.cpus !== undefined && request.cpus > cpus) {
    throw new InvalidArgumentError(
      "cpus",
      `${request.cpus} is above this server's limit of ${cpus}; ask for ${cpus} or less (the limit is set with drydock serve --cpus)`,
    );
  }
}

/** Throws unless `root` (a repository's real top directory) is one the server serves. */
export function assertRepoServed(root: string, served: readonly string[]): void {
  if (served.includes(root)) return;
  throw notServed(root, served);
}

/**
 * Throws unless `realPath` (a real path, links resolved) is a served repository or inside one.
 * Checked before the path is looked at as a repository, so a client that names any other path
 * learns that it is not served, not how to make it a repository.
 */
export function assertPathInServedRepo(realPath: string, served: readonly string[]): void {
  if (
    served.some((root) => realPath === root || realPath.startsWith(root.endsWith(sep) ? root : root + sep))
  ) {
    return;
  }
  throw notServed(realPath, served);
}

/**
 * The top directory of the served repository a client's `repo` names (the repository itself or a
 * directory in it). Anything else is refused as not served before it is looked at as a repository.
 */
export async function servedRepoRoot(path: string, served: readonly string[]): Promise<string> {
  const absolute = resolve(path);
  assertPathInServedRepo(await realpath(absolute).catch(() => absolute), served);
  const root = (await openHostRepo(absolute, "repo")).root;
  assertRepoServed(root, served);
  return root;
}

function notServed(path: string, served: readonly string[]): InvalidArgumentError {
  return new InvalidArgumentError(
    "repo",
    `${path} is not a repository this server serves (${served.join(", ")}); omit repo to use the server's, ` +
      "or ask whoever runs the server to add it with drydock serve --allow-repo PATH",
  );
}
