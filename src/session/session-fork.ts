/**
 * Forks: new sessions that start where another is (or was, at one of its checkpoints). Each gets a
 * box of its own (from the warm pool when one fits) with the source's base copied in as any
 * session's is, then only the checkpoint's new objects, moved from box to box as a git pack the
 * host never opens, then the source's git state and shell. Used by the server (session_fork) and
 * open to anything that makes sessions (an evaluation's attempts), through `start`.
 */
import { LABEL_KEPT_UNTIL } from "../engine/labels.js";
import { InvalidArgumentError, describeError } from "../util/errors.js";
import { logger } from "../util/log.js";
import type { Session, SessionOptions } from "./session.js";

const log = logger("fork");

/** The most forks one call makes. */
export const MAX_FORKS = 32;

/** What is not copied to a fork, in words for the caller. */
export const NOT_COPIED =
  "running processes, background jobs, open ports, shell variables that are not exported, shell functions and aliases, and the task stack are not copied; each fork has its own box, limits, egress policy and audit log";

/** The options a fork of `source` is made with: the same repository, base, image, limits and egress. */
export function forkOptions(source: Session): SessionOptions {
  const info = source.info();
  const base: Partial<SessionOptions> = source.forkOptions ?? {};
  const labels = { ...base.labels };
  delete labels[LABEL_KEPT_UNTIL];
  return {
    ...base,
    repo: source.repo.root,
    // The host commit holding the source's base tree; the fork's base is then the source's own.
    ref: source.hostBaseCommit,
    image: source.box.image,
    network: info.limits.network,
    memoryMB: info.limits.memoryMB,
    cpus: info.limits.cpus,
    pidsLimit: info.limits.pidsLimit,
    workspaceMB: info.limits.workspaceMB,
    tmpMB: info.limits.tmpMB,
    egress: info.egress.allowlist,
    commandTimeoutMs: source.commandTimeoutMs,
    maxOutputBytes: source.maxOutputBytes,
    labels: Object.keys(labels).length > 0 ? labels : undefined,
  };
}

/** Throws naming `field` unless n is a number of forks one call may make. */
export function checkForkCount(n: number, field = "n"): number {
  if (!Number.isInteger(n) || n < 1 || n > MAX_FORKS) {
    throw new InvalidArgumentError(field, `${n} is not a number of forks; give 1 to ${MAX_FORKS}`);
  }
  return n;
}

/**
 * Makes `n` sessions from `source`'s state now or its checkpoint `checkpoint`; `start` makes each
 * (its options carry the fork's seed). All or none: when one fails, those made are removed with
 * `remove` and the error is thrown.
 */
export async function forkSession(
  source: Session,
  options: { n: number; checkpoint?: string; signal?: AbortSignal },
  start: (options: SessionOptions, index: number) => Promise<Session>,
  remove: (session: Session) => Promise<void>,
): Promise<Session[]> {
  const n = checkForkCount(options.n);
  if (!source.hostBaseCommit) {
    throw new InvalidArgumentError(
      "session_id",
      `session ${source.id} started from a repository with no commit; commit something on the host first`,
    );
  }
  const started = Date.now();
  const { seed, done } = await source.forkSeed(options.checkpoint, options.signal);
  try {
    const made = await Promise.allSettled(
      Array.from({ length: n }, (_, i) => start({ ...forkOptions(source), fork: seed }, i)),
    );
    const sessions = made.flatMap((m) => (m.status === "fulfilled" ? [m.value] : []));
    const failed = made.find((m): m is PromiseRejectedResult => m.status === "rejected");
    if (failed) {
      await Promise.allSettled(sessions.map(remove));
      throw failed.reason;
    }
    log.info(
      `session ${source.id}: ${n} fork(s) ready in ${Date.now() - started} ms (${sessions.map((s) => s.id).join(", ")})`,
    );
    return sessions;
  } catch (error) {
    log.debug(`session ${source.id}: fork failed: ${describeError(error)}`);
    throw error;
  } finally {
    await done();
  }
}
