/**
 * The sessions one drydock process owns, by id. It removes boxes left by dead drydock processes
 * when it starts (and, with `reapEveryMs`, again and again while it runs: an owner killed after
 * this start, or one the system had not yet reaped at it), and every box of its own when it closes. With a warm pool, a session whose
 * options the pool serves starts on a pooled box; any other starts cold.
 *
 * With `keepTtlMs` (`serve --keep-sessions`) every box it makes is labelled kept: when this process
 * dies, the reaper leaves the box running until its time passes, and a later manager with the same
 * state directory adopts it when a client names its session (`adopt`).
 */
import type { BoxEngine } from "../engine/box-engine.js";
import {
  LABEL_KEPT_UNTIL,
  LABEL_OWNER,
  LABEL_STATE,
  LABEL_SESSION,
  currentOwner,
  formatOwner,
  keptUntil,
  keptUntilLabel,
  ownerIsDead,
  parseOwner,
} from "../engine/labels.js";
import { resolve } from "node:path";
import { stateDir } from "../util/paths.js";
import {
  InvalidArgumentError,
  LimitExceededError,
  SessionNotFoundError,
  describeError,
} from "../util/errors.js";
import { logger } from "../util/log.js";
import { pruneOrphans } from "./orphans.js";
import { removeCheckpointBook } from "./checkpoint-book.js";
import { drydockEntry } from "./audit-entry.js";
import { appendAuditEntry } from "./audit-log.js";
import { saveFinalDiff } from "./final-diff.js";
import {
  readSessionRecord,
  removeSessionRecord,
  sessionRecordOf,
  writeSessionRecord,
} from "./session-record.js";
import { Session, newSessionId, type SessionOptions } from "./session.js";
import { WarmPool, type WarmPoolOptions } from "./warm-pool.js";

const log = logger("sessions");

export class SessionManager {
  private readonly sessions = new Map<string, Session>();
  private readonly creating = new Set<Promise<unknown>>();
  private readonly removing = new Set<Promise<unknown>>();
  private closed = false;
  private reaper: NodeJS.Timeout | undefined;
  private reaping: Promise<unknown> | undefined;
  /** Kept boxes being adopted, by session id: two calls naming one adopt it once. */
  private readonly adopting = new Map<string, Promise<Session | undefined>>();

  private constructor(
    readonly engine: BoxEngine,
    private warmPool: WarmPool | undefined,
    /** How long boxes are kept after this process dies; undefined: not kept. */
    readonly keepTtlMs: number | undefined,
  ) {}

  /** The warm pool, when this manager keeps one. */
  get pool(): WarmPool | undefined {
    return this.warmPool;
  }

  /**
   * Starts a warm pool later than start-up (once the image it needs exists: an environment
   * built in the background). A manager keeps one pool; closing the manager closes it.
   */
  startPool(options: WarmPoolOptions): void {
    if (this.warmPool || options.size <= 0 || this.closed) return;
    this.warmPool = WarmPool.start(this.engine, { ...options, keepTtlMs: this.keepTtlMs });
  }

  /**
   * Prunes orphaned boxes, then (with `pool.size` > 0) starts filling a warm pool. With
   * `reapEveryMs` > 0 it prunes again at that interval until it closes (the timer does not keep
   * the process alive).
   */
  static async start(
    engine: BoxEngine,
    options: { pool?: WarmPoolOptions; reapEveryMs?: number; keepTtlMs?: number } = {},
  ): Promise<SessionManager> {
    await reapOnce(engine);
    const keepTtlMs = options.keepTtlMs;
    const pool =
      options.pool && options.pool.size > 0
        ? WarmPool.start(engine, { ...options.pool, keepTtlMs })
        : undefined;
    const manager = new SessionManager(engine, pool, keepTtlMs);
    if (options.reapEveryMs && options.reapEveryMs > 0) manager.startReaping(options.reapEveryMs);
    return manager;
  }

  /** Prunes at an interval; a prune still under way when the next is due is not doubled. */
  private startReaping(everyMs: number): void {
    this.reaper = setInterval(() => {
      if (this.reaping || this.closed) return;
      this.reaping = reapOnce(this.engine).finally(() => (this.reaping = undefined));
    }, everyMs);
    this.reaper.unref();
  }

  private stopReaping(): void {
    clearInterval(this.reaper);
    this.reaper = undefined;
  }

  /** Starts a session; `secretSha256` (session-secret.ts) goes into its record for a later resume. */
  async create(options: SessionOptions, secretSha256?: string): Promise<Session> {
    // The pool makes the replacement for a box this session takes once the session is handed
    // out (recorded, and the caller's reply on its way): not on the CPU its start needs.
    let handedOut: () => void = () => undefined;
    const until = new Promise<void>((resolve) => (handedOut = resolve));
    const creating = this.startSession(options, until);
    this.creating.add(creating);
    try {
      const session = await creating;
      this.sessions.set(session.id, session);
      appendAuditEntry(
        drydockEntry(session.id, "session_start", {
          repo: session.repo.root,
          image: session.box.image,
          base_commit: session.baseCommit,
          warm: session.warm,
          ...(options.fork && { forked_from: options.fork.parent }),
        }),
      );
      await writeSessionRecord(session.id, sessionRecordOf(session, session.keptUntil, secretSha256)).catch(
        (error: Error) =>
          log.warn(
            `session ${session.id}: could not record its repository for \`drydock sessions list\`: ${error.message}`,
          ),
      );
      return session;
    } finally {
      this.creating.delete(creating);
      // After the caller's own continuation (which runs before any macrotask).
      setImmediate(handedOut);
    }
  }

  private async startSession(options: SessionOptions, until: Promise<void>): Promise<Session> {
    const taking = this.pool?.take(options, until);
    const warm = taking && (await taking);
    if (!warm) return this.startCold(options);
    try {
      const session = await Session.fromWarm(options, warm);
      session.keptUntil = warm.keptUntil;
      return session;
    } catch (error) {
      // The caller's mistake fails the same way cold; a broken warm box is no reason to fail.
      if (error instanceof InvalidArgumentError || error instanceof LimitExceededError) throw error;
      log.warn(`warm box for session ${warm.sessionId} failed (${describeError(error)}); starting cold`);
      return this.startCold(options);
    }
  }

  /** A new box; labelled kept when this manager keeps sessions. */
  private async startCold(options: SessionOptions): Promise<Session> {
    if (this.keepTtlMs === undefined) return Session.create(this.engine, options, newSessionId());
    const kept = keptUntilLabel(this.keepTtlMs);
    const labels = { ...options.labels, [LABEL_KEPT_UNTIL]: kept };
    const session = await Session.create(this.engine, { ...options, labels }, newSessionId());
    session.keptUntil = Number(kept) * 1000;
    return session;
  }

  /**
   * The session `id` when this manager keeps sessions and a kept box of it is left by a drydock
   * that died (or stopped, leaving it kept), with its state directory: the box is adopted (see
   * Session.adopt), its record names this process as its owner, and its audit log says so. Else
   * undefined: no such box, not kept, past its time, another live drydock's, or its record is gone.
   * `options` are the server's session defaults (the shell's environment and graces).
   */
  adopt(id: string, options: Partial<SessionOptions>): Promise<Session | undefined> {
    const held = this.sessions.get(id);
    if (held) return Promise.resolve(held);
    if (this.keepTtlMs === undefined || this.closed || !/^[0-9a-f]{12}$/.test(id)) {
      return Promise.resolve(undefined);
    }
    let adopting = this.adopting.get(id);
    if (!adopting) {
      adopting = this.adoptBox(id, options).finally(() => this.adopting.delete(id));
      this.adopting.set(id, adopting);
    }
    return adopting;
  }

  private async adoptBox(id: string, options: Partial<SessionOptions>): Promise<Session | undefined> {
    const here = resolve(stateDir());
    const box = (await this.engine.listBoxes(LABEL_SESSION, id)).find(
      (b) => b.labels[LABEL_STATE] !== undefined && resolve(b.labels[LABEL_STATE]) === here,
    );
    const until = box && keptUntil(box.labels);
    if (!box || until === undefined) return undefined;
    const owner = parseOwner(box.labels[LABEL_OWNER]);
    if (owner && !ownerIsDead(owner)) return undefined;
    const record = await readSessionRecord(id);
    if (!record) return undefined;
    // A record naming this process: an adoption of ours that failed part way; try again.
    const adopter = parseOwner(record.adopted_by);
    const self = formatOwner(currentOwner());
    if (adopter && formatOwner(adopter) !== self && !ownerIsDead(adopter)) return undefined;
    if (until <= Date.now()) return undefined;
    if (!(await this.engine.isRunning(box.id))) {
      log.warn(`session ${id}: its kept box ${box.id.slice(0, 12)} is not running; it cannot be adopted`);
      return undefined;
    }
    // Named first, so that no other drydock's reaper or adoption takes it meanwhile.
    await writeSessionRecord(id, { ...record, adopted_by: self });
    const session = await Session.adopt(this.engine, id, box.id, record, options);
    session.keptUntil = until;
    if (this.closed) {
      // Closing while adopting: leave the box kept, as shutdown leaves the others.
      await session.detach();
      return undefined;
    }
    this.sessions.set(id, session);
    appendAuditEntry(drydockEntry(id, "session_adopted", { box: session.box.shortId }));
    return session;
  }

  get(id: string): Session {
    const session = this.sessions.get(id);
    if (!session) throw new SessionNotFoundError(id);
    return session;
  }

  has(id: string): boolean {
    return this.sessions.has(id);
  }

  list(): Session[] {
    return [...this.sessions.values()];
  }

  async destroy(id: string): Promise<void> {
    const session = this.get(id);
    this.sessions.delete(id);
    const removing = this.remove(session);
    this.removing.add(removing);
    try {
      await removing;
    } finally {
      this.removing.delete(removing);
    }
  }

  /** Removes every session (and waits for sessions still being created, then removes them too) and the pool; returns once every box is gone. */
  async closeAll(): Promise<void> {
    this.closed = true;
    this.stopReaping();
    const closingPool = this.closePool();
    await Promise.allSettled([...this.creating]);
    const all = this.list();
    this.sessions.clear();
    // Removals already under way (a client that left as the server stops) are waited for too.
    await Promise.allSettled([...all.map((s) => this.remove(s)), closingPool, ...this.removing]);
  }

  /** Keeps the session's last diff on the host, removes its box, then its record. */
  private async remove(session: Session): Promise<void> {
    const kept = await keepFinalDiff(session);
    await session.destroy();
    await removeSessionRecord(session.id);
    removeCheckpointBook(session.id);
    appendAuditEntry(drydockEntry(session.id, "session_end", { box: session.box.shortId, ...kept }));
  }

  /** Removes the warm pool's idle boxes and stops refilling it. */
  async closePool(): Promise<void> {
    this.closed = true;
    this.stopReaping();
    await this.pool?.close();
  }

  /** Forgets sessions without removing their boxes (`--keep-sessions`). */
  detachAll(): Session[] {
    const all = this.list();
    this.sessions.clear();
    for (const s of all) appendAuditEntry(drydockEntry(s.id, "session_kept", { box: s.box.shortId }));
    return all;
  }

  /** Adoptions under way, waited for at a shutdown that keeps sessions. */
  async settleAdoptions(): Promise<void> {
    await Promise.allSettled([...this.adopting.values()]);
  }
}

/**
 * How long taking a session's last diff may hold up its removal: a diff takes well under a second
 * on a usual workspace; one that takes longer (hundreds of thousands of new files) is not kept,
 * and the session's end says why, rather than keeping its box from going quickly.
 */
const FINAL_DIFF_TIMEOUT_MS = 8_000;

/**
 * Saves the session's diff beside its audit log before its box goes, so the live page and
 * `drydock sessions diff` can still show it. A box that cannot give it (gone, stuck) is removed
 * all the same; the session_end line says which.
 */
async function keepFinalDiff(session: Session): Promise<Record<string, unknown>> {
  try {
    const diff = await session.diffBytes(AbortSignal.timeout(FINAL_DIFF_TIMEOUT_MS));
    const saved = await saveFinalDiff(session.id, diff);
    return { diff_bytes: diff.length, ...(saved.cut && { diff_kept_bytes: saved.bytes }) };
  } catch (error) {
    const why = describeError(error);
    log.warn(`session ${session.id}: its last diff could not be kept: ${why}`);
    return { diff_error: why };
  }
}

/** One prune; a failure (the engine not answering for a moment) is logged, never thrown. */
function reapOnce(engine: BoxEngine): Promise<void> {
  return pruneOrphans(engine).then(
    () => undefined,
    (error: unknown) => log.warn(`could not prune orphans: ${describeError(error)}`),
  );
}
