/**
 * A warm pool: a few idle boxes made ahead of time from the session image and hardening profile,
 * each with its shell live and its copy-in receiver waiting, so a session starts by copying the
 * repository in and nothing else. A session takes a box and the pool refills in the background.
 *
 * It lives in session/, not engine/: what makes a box warm is the shell and the receiver in it,
 * which are sandbox/ and workspace/ concepts that engine/ may not import.
 *
 * Pooled boxes carry the session, owner and pool labels, so `drydock sessions prune` and the next
 * drydock start remove them after a crash. A box idle past its time to live is replaced. `take` is
 * synchronous: a box leaves the idle list before any await, so no two sessions can get one box.
 */
import { rm } from "node:fs/promises";
import type { BoxEngine } from "../engine/box-engine.js";
import { LABEL_KEPT_UNTIL, LABEL_POOL, keptUntilLabel } from "../engine/labels.js";
import type { Box } from "../sandbox/box.js";
import { openBoxChannel } from "../sandbox/box-channel.js";
import type { PtyShell } from "../sandbox/pty-shell.js";
import { describeError } from "../util/errors.js";
import { logger } from "../util/log.js";
import { prefillBox, type Prefilled } from "../workspace/box-workspace.js";
import { SnapshotReceiver } from "../workspace/snapshot-receiver.js";
import { poolMisfit, type BoxRequest, type PoolProfile } from "./pool-fit.js";
import { createSessionBox, startSessionShell } from "./session-box.js";
import { newSessionId } from "./session-id.js";

const log = logger("pool");

export const DEFAULT_POOL_TTL_MS = 15 * 60_000;
const MAX_BACKOFF_MS = 60_000;
/** The longest a replacement waits for the session that took a box to be handed out. */
export const REFILL_DEFER_MAX_MS = 10_000;

export interface WarmPoolOptions {
  /** Idle boxes to keep; 0 makes a pool that never has one. */
  size: number;
  profile: PoolProfile;
  /** How long a box may wait idle before it is replaced (default 15 minutes). */
  ttlMs?: number;
  /**
   * A repository whose current commit each box holds before it is taken (see `prefillBox`): a
   * session on that repository's working tree then sends only what differs from the commit.
   */
  prefillRepo?: string;
  /**
   * Sessions are kept (`--keep-sessions`) this long: each box is labelled kept until its idle time
   * to live plus this, so a session on it is kept at least this long.
   */
  keepTtlMs?: number;
}

/** A box ready for a session: its id is the session's id. */
export interface WarmBox {
  sessionId: string;
  box: Box;
  shell: PtyShell;
  gatewayDir: string;
  receiver: SnapshotReceiver;
  /** What the box holds already, when the pool prefills its boxes. */
  prefilled?: Prefilled;
  /** When the box's keeping ends (epoch ms; its kept-until label), for a pool of kept sessions. */
  keptUntil?: number;
}

interface Idle {
  warm: WarmBox;
  timer: NodeJS.Timeout;
}

/** Removes a warm box that will not serve a session, and everything that came with it. */
export async function disposeWarmBox(warm: WarmBox): Promise<void> {
  warm.receiver.close();
  await warm.shell.dispose();
  await warm.box
    .remove()
    .catch((error) => log.warn(`removing box ${warm.box.shortId}: ${describeError(error)}`));
  await rm(warm.gatewayDir, { recursive: true, force: true });
}

export class WarmPool {
  private readonly idle: Idle[] = [];
  private filling: Promise<void> | undefined;
  private closed = false;
  private failures = 0;
  /** Boxes taken whose replacement waits for their session: the fill loop does not make those. */
  private deferred = 0;
  private wake: (() => void) | undefined;
  private waiters: Array<() => void> = [];
  readonly ttlMs: number;
  private keepTtlMs: number | undefined;
  private prefillRepo: string | undefined;

  private constructor(
    private readonly engine: BoxEngine,
    readonly size: number,
    readonly profile: PoolProfile,
    ttlMs: number | undefined,
  ) {
    this.ttlMs = ttlMs ?? DEFAULT_POOL_TTL_MS;
  }

  /** Makes a pool and starts filling it in the background. */
  static start(engine: BoxEngine, options: WarmPoolOptions): WarmPool {
    const pool = new WarmPool(engine, Math.max(0, Math.floor(options.size)), options.profile, options.ttlMs);
    pool.keepTtlMs = options.keepTtlMs;
    pool.prefillRepo = options.prefillRepo;
    if (pool.size > 0) log.info(`keeping ${pool.size} warm box(es) of ${options.profile.image}`);
    pool.refill();
    return pool;
  }

  get idleCount(): number {
    return this.idle.length;
  }

  /** The session ids of the idle boxes, oldest first. */
  idleIds(): string[] {
    return this.idle.map((i) => i.warm.sessionId);
  }

  /**
   * An idle box for a session with these box options, or undefined: the session then starts cold.
   * With `until` (the session handed out to its caller), the replacement is started once it
   * settles (at most REFILL_DEFER_MAX_MS later), so that making and prefilling it does not take
   * the CPU the session's own start needs.
   */
  take(request: BoxRequest, until?: Promise<unknown>): WarmBox | undefined {
    if (this.closed || this.size === 0) return undefined;
    const misfit = poolMisfit(this.profile, request);
    if (misfit !== undefined) {
      log.debug(`a session starts cold: the pool does not serve ${misfit}`);
      return undefined;
    }
    const entry = this.idle.shift();
    if (until === undefined || !entry) this.refill();
    else {
      // Counted until then, so that a fill loop still running (the pool just filled) does not
      // make the replacement now, beside the session's start.
      this.deferred++;
      let timer: NodeJS.Timeout | undefined;
      const deferred = new Promise<void>((resolve) => {
        timer = setTimeout(resolve, REFILL_DEFER_MAX_MS);
        timer.unref();
      });
      void Promise.race([until.catch(() => undefined), deferred]).then(() => {
        clearTimeout(timer);
        this.deferred--;
        this.refill();
      });
    }
    if (!entry) return undefined;
    clearTimeout(entry.timer);
    return entry.warm;
  }

  /** Resolves once the pool holds all its idle boxes, or is closed. */
  full(): Promise<void> {
    if (this.closed || this.idle.length >= this.size) return Promise.resolve();
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  /** Stops refilling and removes every idle box. */
  async close(): Promise<void> {
    this.closed = true;
    this.wake?.();
    await this.filling;
    const all = this.idle.splice(0);
    for (const entry of all) clearTimeout(entry.timer);
    await Promise.allSettled(all.map((entry) => disposeWarmBox(entry.warm)));
    this.notify();
  }

  private notify(): void {
    if (!this.closed && this.idle.length < this.size) return;
    for (const resolve of this.waiters.splice(0)) resolve();
  }

  /** Whether the pool should make a box now: fewer idle than its size, not counting deferred ones. */
  private wanting(): boolean {
    return !this.closed && this.idle.length + this.deferred < this.size;
  }

  private refill(): void {
    if (this.filling || !this.wanting()) return;
    this.filling = (async () => {
      while (this.wanting()) {
        try {
          await this.fillOne();
          this.failures = 0;
        } catch (error) {
          this.failures++;
          const waitMs = Math.min(MAX_BACKOFF_MS, 1000 * 2 ** this.failures);
          log.warn(`could not make a warm box (${describeError(error)}); trying again in ${waitMs / 1000} s`);
          await new Promise<void>((resolve) => {
            const timer = setTimeout(resolve, waitMs);
            timer.unref();
            this.wake = () => {
              clearTimeout(timer);
              resolve();
            };
          });
          this.wake = undefined;
        }
      }
    })().finally(() => {
      this.filling = undefined;
      // A take between the loop's last check and here found the pool still filling.
      if (this.wanting()) this.refill();
    });
  }

  private async fillOne(): Promise<void> {
    const sessionId = newSessionId();
    const kept = this.keepTtlMs === undefined ? undefined : keptUntilLabel(this.keepTtlMs + this.ttlMs);
    const labels = { [LABEL_POOL]: "warm", ...(kept ? { [LABEL_KEPT_UNTIL]: kept } : {}) };
    const { box, gatewayDir } = await createSessionBox(this.engine, sessionId, { ...this.profile, labels });
    let shell: PtyShell | undefined;
    try {
      shell = await startSessionShell(box);
      const prefilled =
        this.prefillRepo === undefined
          ? undefined
          : await prefillBox(box, this.prefillRepo, SnapshotReceiver.open(box));
      // The receiver waits as long as the box may, plus the time a copy-in may take.
      const receiver = SnapshotReceiver.open(box, { timeoutMs: this.ttlMs + 600_000 });
      const keptUntil = kept === undefined ? undefined : Number(kept) * 1000;
      const warm: WarmBox = { sessionId, box, shell, gatewayDir, receiver, prefilled, keptUntil };
      // Idle means ready: the receiver's exec is attached and the file tools' channel answers,
      // so a take pays for no exec start, and the session's first file operation for none either.
      await Promise.all([receiver.ready, openBoxChannel(box)]);
      if (this.closed) {
        await disposeWarmBox(warm);
        return;
      }
      const entry: Idle = {
        warm,
        timer: setTimeout(() => void this.expire(entry, "idle past its time to live"), this.ttlMs),
      };
      entry.timer.unref();
      // The receiver ends while idle only if the box went away (removed by hand, the engine restarted).
      void receiver.result.then(
        () => this.expire(entry, "its box stopped"),
        () => this.expire(entry, "its box stopped"),
      );
      this.idle.push(entry);
      log.debug(`warm box ${box.shortId} ready (session ${sessionId})`);
      this.notify();
    } catch (error) {
      await shell?.dispose();
      await box.remove().catch(() => undefined);
      await rm(gatewayDir, { recursive: true, force: true });
      throw error;
    }
  }

  private async expire(entry: Idle, why: string): Promise<void> {
    const at = this.idle.indexOf(entry);
    if (at < 0) return;
    this.idle.splice(at, 1);
    clearTimeout(entry.timer);
    log.debug(`replacing warm box ${entry.warm.box.shortId}: ${why}`);
    this.refill();
    await disposeWarmBox(entry.warm);
  }
}
