/**
 * `drydock sessions checkpoint|restore|checkpoints|fork` from another process than the server:
 * the same box scripts the tools run, on the session's box, and the same checkpoint book (kept in
 * the state directory), so the server and the command line see one list. The agent's shell is the
 * server's: from here a checkpoint saves files and git's state only, and a restore leaves the
 * shell as it is. A fork made here is a kept session (as `serve --keep-sessions` keeps them): its
 * id and secret are printed, and a server started with --keep-sessions on the same state directory
 * takes it up with session_resume.
 */
import type { BoxEngine } from "../engine/box-engine.js";
import { Box } from "../sandbox/box.js";
import { closeBoxChannel } from "../sandbox/box-channel.js";
import { boxLimits } from "../sandbox/box-profile.js";
import { drydockEntry } from "../session/audit-entry.js";
import { appendAuditEntry } from "../session/audit-log.js";
import {
  CheckpointBook,
  DEFAULT_CHECKPOINT_MAX_BYTES,
  DEFAULT_MAX_CHECKPOINTS,
  checkpointBookPath,
  newCheckpointSlot,
  type CheckpointEntry,
  type CheckpointListing,
} from "../session/checkpoint-book.js";
import { DEFAULT_KEEP_TTL_MS } from "../server/drydock-server.js";
import { checkForkCount } from "../session/session-fork.js";
import { SessionManager } from "../session/session-manager.js";
import { newSessionSecret, sessionSecretHash } from "../session/session-secret.js";
import type { ForkSeed } from "../session/session-fork.js";
import type { SessionOptions } from "../session/session.js";
import { NotFoundError } from "../util/errors.js";
import {
  dropCheckpoint,
  exportCheckpoint,
  restoreCheckpoint,
  saveCheckpoint,
} from "../workspace/box-checkpoint.js";
import { requireBox, type SessionTarget } from "./session-target.js";

function boxOf(engine: BoxEngine, target: SessionTarget, verb: string): Box {
  const summary = requireBox(target, verb);
  const image = target.record?.image ?? "";
  return Box.adopt(engine, summary.id, target.id, image, boxLimits({ image }));
}

function bookOf(target: SessionTarget): CheckpointBook {
  return new CheckpointBook(
    { maxCheckpoints: DEFAULT_MAX_CHECKPOINTS, maxBytes: DEFAULT_CHECKPOINT_MAX_BYTES },
    checkpointBookPath(target.id, target.state),
  );
}

/** The box's private index is git-locked while the server's own diff runs: wait for it, up to 10 s. */
async function retryLocked<T>(run: () => Promise<T>): Promise<T> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    try {
      return await run();
    } catch (error) {
      if (!/index\.lock/.test((error as Error).message) || Date.now() > deadline) throw error;
      await new Promise((r) => setTimeout(r, 200));
    }
  }
}

async function inBox<T>(
  engine: BoxEngine,
  target: SessionTarget,
  verb: string,
  take: (box: Box) => Promise<T>,
): Promise<T> {
  const box = boxOf(engine, target, verb);
  try {
    return await retryLocked(() => take(box));
  } finally {
    closeBoxChannel(box);
  }
}

/** Saves the session's files and git state as checkpoint `name` (not its shell: the server's). */
export async function checkpointSession(
  engine: BoxEngine,
  target: SessionTarget,
  name: string,
  options: { message?: string; includeIgnored?: boolean },
): Promise<CheckpointListing> {
  const book = bookOf(target);
  const replaced = book.admit(name);
  const includeIgnored = options.includeIgnored ?? false;
  const slot = newCheckpointSlot();
  const saved = await inBox(engine, target, "checkpoint", (box) =>
    saveCheckpoint(box, slot, { name, includeIgnored, maxBytes: book.limits.maxBytes }),
  );
  book.set({
    name,
    ...(options.message === undefined ? {} : { message: options.message }),
    slot,
    commit: saved.commit,
    bytes: saved.bytes,
    files: saved.files,
    includeIgnored,
    createdAt: new Date(),
  });
  if (replaced) await inBox(engine, target, "checkpoint", (box) => dropCheckpoint(box, replaced.slot));
  appendAuditEntry(drydockEntry(target.id, "session_checkpoint", { name, by: "command line" }), target.state);
  return book.list().find((c) => c.name === name)!;
}

/** Returns the session's files and git state to checkpoint `name`; the shell is left as it is. */
export async function restoreSession(
  engine: BoxEngine,
  target: SessionTarget,
  name: string,
): Promise<{ files: number; shellSaved: boolean }> {
  const entry = bookOf(target).get(name);
  const { files } = await inBox(engine, target, "restore", (box) =>
    restoreCheckpoint(box, entry.slot, { name, commit: entry.commit, includeIgnored: entry.includeIgnored }),
  );
  appendAuditEntry(drydockEntry(target.id, "session_restore", { name, by: "command line" }), target.state);
  return { files, shellSaved: entry.shell !== undefined };
}

export function listCheckpoints(target: SessionTarget): CheckpointListing[] {
  return bookOf(target).list();
}

export interface CliFork {
  sessionId: string;
  secret: string;
  box: string;
}

/**
 * `n` kept sessions from the session's checkpoint `checkpoint` (or its files and git state now),
 * each with the source's repository, image, limits and egress; all or none.
 */
export async function forkFromCli(
  engine: BoxEngine,
  target: SessionTarget,
  options: { n: number; checkpoint?: string; keepTtlMs?: number },
): Promise<CliFork[]> {
  const n = checkForkCount(options.n, "-n");
  const record = target.record;
  if (!record?.base_commit || !record.host_base_commit || !record.image) {
    throw new NotFoundError(
      `session ${target.id} has no record of its repository and base in the state directory; fork it from its server with session_fork`,
    );
  }
  const source = boxOf(engine, target, "fork");
  const book = bookOf(target);
  let entry: CheckpointEntry;
  let temporary = false;
  if (options.checkpoint !== undefined) {
    entry = book.get(options.checkpoint, "--checkpoint");
  } else {
    const slot = newCheckpointSlot();
    const saved = await retryLocked(() =>
      saveCheckpoint(source, slot, { name: "fork", includeIgnored: false, maxBytes: book.limits.maxBytes }),
    );
    entry = { name: "fork", slot, ...saved, includeIgnored: false, createdAt: new Date() };
    temporary = true;
  }
  const baseCommit = record.base_commit;
  let exported: ReturnType<typeof exportCheckpoint> | undefined;
  const seed: ForkSeed = {
    parent: target.id,
    baseCommit,
    hostBaseCommit: record.host_base_commit,
    dirty: record.host_base_commit !== baseCommit,
    ...(entry.shell === undefined ? {} : { shell: entry.shell }),
    ...(options.checkpoint === undefined ? {} : { name: entry.name, message: entry.message }),
    exportFor: (have) =>
      (exported ??= exportCheckpoint(source, entry.slot, {
        name: entry.name,
        commit: entry.commit,
        baseCommit,
        includeIgnored: entry.includeIgnored,
        have,
        maxBytes: book.limits.maxBytes,
      })),
  };
  const limits = record.limits ?? {};
  const num = (key: string) => (typeof limits[key] === "number" ? limits[key] : undefined);
  const forkOptions: SessionOptions = {
    repo: record.repo,
    ref: record.host_base_commit,
    image: record.image,
    network: typeof limits.network === "string" ? limits.network : undefined,
    memoryMB: num("memoryMB"),
    cpus: num("cpus"),
    pidsLimit: num("pidsLimit"),
    workspaceMB: num("workspaceMB"),
    tmpMB: num("tmpMB"),
    egress: record.egress ?? [],
    fork: seed,
  };
  const manager = await SessionManager.start(engine, { keepTtlMs: options.keepTtlMs ?? DEFAULT_KEEP_TTL_MS });
  try {
    const secrets = Array.from({ length: n }, () => newSessionSecret());
    const made = await Promise.allSettled(
      secrets.map((secret) => manager.create(forkOptions, sessionSecretHash(secret))),
    );
    const failed = made.find((m): m is PromiseRejectedResult => m.status === "rejected");
    if (failed) {
      await manager.closeAll();
      throw failed.reason;
    }
    const forks = made.map((m, i) => {
      const session = (m as PromiseFulfilledResult<Awaited<ReturnType<typeof manager.create>>>).value;
      return { sessionId: session.id, secret: secrets[i]!, box: session.box.shortId };
    });
    // The boxes stay, kept, for a server with --keep-sessions to take up.
    for (const session of manager.detachAll()) {
      await session.detach();
      // The channel the fork's restore opened into its box would keep this process alive.
      closeBoxChannel(session.box);
    }
    await manager.closeAll();
    return forks;
  } finally {
    if (temporary) await dropCheckpoint(source, entry.slot).catch(() => undefined);
    closeBoxChannel(source);
  }
}
