/**
 * Forks: new sessions that start where another is (or was, at one of its checkpoints). Each gets a
 * box of its own (from the warm pool when one fits). No file of the repository is copied from the
 * host: a box prefilled with the repository is used as it is, any other gets only `.git`; then
 * the objects the new box lacks move from the source's box as a git pack the host never opens,
 * and the checkpoint is restored there (only paths that differ from what the box holds are
 * written), then the shell. Used by the server (session_fork) and open to anything that makes
 * sessions (an evaluation's attempts), through `start`.
 */
import { LABEL_KEPT_UNTIL } from "../engine/labels.js";
import { InvalidArgumentError, describeError } from "../util/errors.js";
import { logger } from "../util/log.js";
import {
  dropCheckpoint,
  exportCheckpoint,
  importCheckpoint,
  refTips,
  type CheckpointExport,
} from "../workspace/box-checkpoint.js";
import type { HostRepo } from "../workspace/host-repo.js";
import { newCheckpointSlot } from "./checkpoint-book.js";
import type { Session, SessionOptions } from "./session.js";
import { putShellStateInBox, restoreShellState, type ShellState } from "./shell-state.js";

const log = logger("fork");

/** The most forks one call makes. */
export const MAX_FORKS = 32;

/** What is not copied to a fork, in words for the caller. */
export const NOT_COPIED =
  "running processes, background jobs, open ports, shell variables that are not exported, shell functions and aliases, and the task stack are not copied; each fork has its own box, limits, egress policy and audit log";

/** What a fork's new session is given of its source. */
export interface ForkSeed {
  /** The source session's id, noted in the fork's audit log. */
  parent: string;
  /** The source's base: the fork's diff is taken against the same commit. */
  baseCommit: string;
  hostBaseCommit: string;
  dirty: boolean;
  /** The checkpoint's objects, for a box that holds `have` (commits and trees) whole. */
  exportFor(have: string[]): Promise<CheckpointExport>;
  /** The source's repository, opened already (absent: the fork opens it again). */
  repo?: HostRepo;
  /** Absent: the fork's shell starts fresh in /workspace. */
  shell?: ShellState;
  /** The checkpoint's name, when the fork was made from one: the fork holds it under that name. */
  name?: string;
  message?: string;
}

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
  const { seed, done } = await forkSeedOf(source, options.checkpoint, options.signal);
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

/** A named checkpoint's export is kept for later forks of it when its pack is at most this big. */
export const KEPT_EXPORT_BYTES = 4 * 1024 * 1024;
/** The most bytes of exports kept per source session (the least recently used go first). */
export const KEPT_EXPORTS_BYTES = 8 * 1024 * 1024;

/**
 * Exports of named checkpoints, per source session, by slot, commit and the objects the new box
 * holds: a checkpoint never changes under its slot (saving under the same name makes a new slot),
 * so a second fork of it to a box holding the same objects sends the same pack, and the source's
 * box need not make it again (about 90 ms at 10,000 files). The new box checks a kept pack as it
 * checks a fresh one. Kept in this process only, and gone with the session.
 */
const keptExports = new WeakMap<Session, Map<string, CheckpointExport>>();

function keptExport(source: Session, key: string): CheckpointExport | undefined {
  const kept = keptExports.get(source);
  const hit = kept?.get(key);
  if (kept && hit) {
    // Most recently used last: the first in the map is the first to go.
    kept.delete(key);
    kept.set(key, hit);
  }
  return hit;
}

function keepExport(source: Session, key: string, exported: CheckpointExport): void {
  const size = (e: CheckpointExport) => (e.pack?.length ?? 0) + e.baseRaw.length;
  // A pack that streams (past FORK_HELD_PACK_BYTES) is never held, so never kept.
  if (exported.pack === undefined || size(exported) > KEPT_EXPORT_BYTES) return;
  let kept = keptExports.get(source);
  if (!kept) keptExports.set(source, (kept = new Map()));
  kept.set(key, exported);
  let total = 0;
  for (const e of kept.values()) total += size(e);
  for (const [oldest, e] of kept) {
    if (total <= KEPT_EXPORTS_BYTES) break;
    kept.delete(oldest);
    total -= size(e);
  }
}

/**
 * What a fork of `source` starts from: checkpoint `name`, or the state now (saved for the fork and
 * dropped by `done`). `exportFor` takes it out of the box once per set of objects new boxes hold
 * (for a named checkpoint, once for every fork of it while the export is kept: keptExports).
 */
export async function forkSeedOf(
  source: Session,
  name?: string,
  signal?: AbortSignal,
): Promise<{ seed: ForkSeed; done: () => Promise<void> }> {
  const entry =
    name === undefined
      ? await source.saveState("fork", { signal })
      : source.checkpoints.get(name, "checkpoint");
  const exports = new Map<string, Promise<CheckpointExport>>();
  const seed: ForkSeed = {
    parent: source.id,
    repo: source.repo,
    baseCommit: source.baseCommit,
    hostBaseCommit: source.hostBaseCommit,
    dirty: source.dirty,
    ...(entry.shell === undefined ? {} : { shell: entry.shell }),
    ...(name === undefined ? {} : { name, message: entry.message }),
    exportFor: (have) => {
      const key = [...have].sort().join(",");
      const keptKey = `${entry.slot} ${entry.commit} ${key}`;
      let exported = exports.get(key);
      const kept = name === undefined || exported ? undefined : keptExport(source, keptKey);
      if (kept) return Promise.resolve(kept);
      if (!exported) {
        exported = source.oneDiffAtATime(() =>
          exportCheckpoint(source.box, entry.slot, {
            name: entry.name,
            commit: entry.commit,
            baseCommit: source.baseCommit,
            includeIgnored: entry.includeIgnored,
            have,
            maxBytes: source.checkpoints.limits.maxBytes,
            signal,
          }),
        );
        exports.set(key, exported);
        exported.then(
          (e) => name === undefined || keepExport(source, keptKey, e),
          () => exports.delete(key),
        );
      }
      return exported;
    },
  };
  const done = async () => {
    if (name === undefined) await dropCheckpoint(source.box, entry.slot).catch(() => undefined);
  };
  return { seed, done };
}

/**
 * Brings a fork's state into its new session, whose box holds `.git` or a prefilled commit of the
 * repository (session.ts, copyInOrFork): what the box lacks, then files, git's state, the shell.
 */
export async function takeFork(session: Session, seed: ForkSeed, holds?: string[]): Promise<void> {
  const steps: string[] = [];
  let at = Date.now();
  const step = (what: string) => {
    const now = Date.now();
    steps.push(`${what} ${now - at} ms`);
    at = now;
  };
  const have = holds ?? (await refTips(session.box, seed.hostBaseCommit));
  if (holds === undefined) step("tips");
  const exported = await seed.exportFor(have);
  const held = exported.pack === undefined ? "streams" : `${exported.pack.length} bytes`;
  step(`export (${held}${exported.byChannel ? ", by the box's program" : ""})`);
  const slot = newCheckpointSlot();
  const name = seed.name ?? "fork";
  const shell = seed.shell;
  // The shell's state goes into the box beside the import (the channel serves both at once).
  const writing = shell === undefined ? undefined : putShellStateInBox(session.box, shell);
  writing?.catch(() => undefined);
  const imported = await session.oneDiffAtATime(() =>
    importCheckpoint(session.box, slot, exported, { name }),
  );
  session.forkImportedByChannel = imported.byChannel;
  step(
    `import (${imported.packBytes} bytes${imported.byChannel ? ", by the box's program" : exported.pack === undefined ? ", streamed from the source's box" : ""})`,
  );
  if (writing) {
    await writing;
    await restoreShellState((command) => session.bash(command, { timeoutMs: 30_000 }));
    step("shell");
  }
  log.debug(`session ${session.id}: fork of ${seed.parent}: ${steps.join(", ")}`);
  if (seed.name !== undefined) {
    session.checkpoints.set({
      name: seed.name,
      ...(seed.message === undefined ? {} : { message: seed.message }),
      slot,
      commit: exported.commit,
      bytes: imported.packBytes,
      files: 0,
      includeIgnored: exported.includeIgnored,
      createdAt: new Date(),
      ...(seed.shell === undefined ? {} : { shell: seed.shell }),
    });
  }
}
