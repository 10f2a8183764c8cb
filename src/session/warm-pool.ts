/**
 * A warm pool: a few idle boxes made ahead of time from the session image and hardening profile,
 * each with its shell live and its copy-in receiver waiting, so a session starts by copying the
 * repository in and nothing else. A session takes a box and the pool refills in the background.
 *
 * It lives in session/, not engine/: what makes a box warm is the shell and the receiver in it,
 * which are sandbox/ and workspace/ concepts that engine/ may not import.
 *
 * It grows with demand: past its base size it aims for the largest burst of sessions that asked
 * it for a box lately, up to its ceiling, each made only when admission says it fits (pool-growth.ts),
 * and it shrinks back to its base once no session has asked for a while. A session that finds it
 * empty waits for the box being made that will be ready first rather than starting its own.
 *
 * Pooled boxes carry the session, owner and pool labels, so `drydock sessions prune` and the next
 * drydock start remove them after a crash, and their first process ends when drydock's attach
 * does, grown ones alike. A box idle past its time to live is replaced. `take` decides before any
 * await: a box leaves the idle list (or is claimed while being made) at once, so no two sessions
 * can get one box.
 */
import type { BoxEngine } from "../engine/box-engine.js";
import { describeError } from "../util/errors.js";
import { logger } from "../util/log.js";
import { poolMisfit, type BoxRequest, type PoolProfile } from "./pool-fit.js";
import { DEMAND_WINDOW_MS, growthVerdict, largestBurst, poolTarget, type PoolRoom } from "./pool-growth.js";
import { disposeWarmBox, makeWarmBox, type WarmBox } from "./warm-box.js";

const log = logger("pool");

export const DEFAULT_POOL_TTL_MS = 15 * 60_000;
const MAX_BACKOFF_MS = 60_000;
/** The longest a replacement waits for the session that took a box to be handed out. */
export const REFILL_DEFER_MAX_MS = 10_000;
/** The longest a session waits for the box being made for it before it starts cold instead. */
export const CLAIM_WAIT_MAX_MS = 30_000;
/**
 * Boxes made at once: on a small machine more only share the same CPU, and each box of a burst
 * is wanted as soon as it can be ready, not all at the end.
 */
const MAX_FILLING = 2;
/** The most asks the pool remembers (the newest): far more than a burst it could follow. */
const MAX_ASKS_KEPT = 10_000;
/** Sessions asked for less than this apart are one burst, during which an idle pool makes no box. */
const BURST_QUIET_MS = 1_000;

export interface WarmPoolOptions {
  /** Idle boxes to keep whatever the demand (the base); 0 makes a pool that never has one. */
  size: number;
  /**
   * The most idle boxes the pool grows to when sessions ask for more than `size` within the
   * demand window (default `size`: no growth).
   */
  maxSize?: number;
  /**
   * What admission says of one more session now; past `size`, each box is made only when it
   * fits (pool-growth.ts). Without it, only `maxSize` bounds the growth.
   */
  room?: () => Promise<PoolRoom>;
  /** How long a session's ask counts as demand (default DEMAND_WINDOW_MS, 5 minutes). */
  demandWindowMs?: number;
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

interface Idle {
  warm: WarmBox;
  timer: NodeJS.Timeout;
}

/** A box being made: it goes to the session waiting for it (`claim`), else to the idle list. */
interface Filling {
  claim?: (warm: WarmBox | undefined) => void;
}

export class WarmPool {
  private readonly idle: Idle[] = [];
  /** Boxes being made, oldest first: the first is the one that will be ready first. */
  private readonly filling = new Set<Filling>();
  private scheduling: Promise<void> | undefined;
  /** A refill asked for while scheduling: one more pass once it ends. */
  private again = false;
  private closed = false;
  private failures = 0;
  private retry: NodeJS.Timeout | undefined;
  private quietTimer: NodeJS.Timeout | undefined;
  /** Boxes being removed (shrunk, expired), waited for by `close`. */
  private readonly disposing = new Set<Promise<void>>();
  /** Replacements of taken boxes that wait for their session to be handed out, by their release. */
  private readonly deferrals = new Set<() => void>();
  private waiters: Array<() => void> = [];
  /** When sessions asked the pool for a box, within the demand window. */
  private asked: number[] = [];
  private shrinkTimer: NodeJS.Timeout | undefined;
  /** The last growth decision logged, so that a pool held by admission says so once, not per take. */
  private lastGrowth = "";
  readonly ttlMs: number;
  readonly maxSize: number;
  private keepTtlMs: number | undefined;
  private prefillRepo: string | undefined;
  private room: WarmPoolOptions["room"];
  private demandWindowMs = DEMAND_WINDOW_MS;

  private constructor(
    private readonly engine: BoxEngine,
    readonly size: number,
    readonly profile: PoolProfile,
    ttlMs: number | undefined,
    maxSize: number | undefined,
  ) {
    this.ttlMs = ttlMs ?? DEFAULT_POOL_TTL_MS;
    this.maxSize = Math.max(size, Math.floor(maxSize ?? size));
  }

  /** Makes a pool and starts filling it in the background. */
  static start(engine: BoxEngine, options: WarmPoolOptions): WarmPool {
    const size = Math.max(0, Math.floor(options.size));
    const pool = new WarmPool(engine, size, options.profile, options.ttlMs, options.maxSize);
    pool.keepTtlMs = options.keepTtlMs;
    pool.prefillRepo = options.prefillRepo;
    pool.room = options.room;
    if (options.demandWindowMs !== undefined) pool.demandWindowMs = options.demandWindowMs;
    if (pool.size > 0) {
      const growth =
        pool.maxSize > pool.size
          ? `, growing to at most ${pool.maxSize} with demand${pool.room ? " as admission allows" : ""}`
          : "";
      log.info(`keeping ${pool.size} warm box(es) of ${options.profile.image}${growth}`);
    }
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

  /** The idle boxes the pool aims for now: its size, raised by recent demand up to maxSize. */
  target(): number {
    const since = Date.now() - this.demandWindowMs;
    while (this.asked.length > 0 && this.asked[0]! <= since) this.asked.shift();
    return poolTarget(this.size, this.maxSize, largestBurst(this.asked));
  }

  /**
   * A box of the pool for a session with these box options, or undefined: the session then starts
   * cold. An idle box is taken at once; with none idle, the session waits for the box being made
   * that will be ready first (resolving undefined if that fails: then it starts cold), since a
   * second box started beside it would only share the CPU with it. With `until` (the session
   * handed out to its caller), the replacement is started once it settles (at most
   * REFILL_DEFER_MAX_MS later), so that making it does not take the CPU the session's start needs,
   * until a session finds the pool empty: a burst is then under way, and every replacement owed
   * starts at once.
   * The choice is made before any await, so no two sessions can get one box.
   */
  take(request: BoxRequest, until?: Promise<unknown>): Promise<WarmBox | undefined> | undefined {
    if (this.closed || this.size === 0) return undefined;
    const misfit = poolMisfit(this.profile, request);
    if (misfit !== undefined) {
      log.debug(`a session starts cold: the pool does not serve ${misfit}`);
      return undefined;
    }
    this.noteAsked();
    const entry = this.idle.shift();
    if (entry) {
      clearTimeout(entry.timer);
      this.replaceAfter(until);
      return Promise.resolve(entry.warm);
    }
    for (const release of [...this.deferrals]) release();
    this.refill();
    const next = this.unclaimed();
    if (next) {
      this.replaceAfter(until);
      return this.wait(next);
    }
    // The pool is deciding whether it may grow (admission is asked first): the box it starts is
    // still the one that will be ready first.
    if (this.scheduling) {
      return this.scheduling.then(() => {
        const started = this.unclaimed();
        return started ? this.wait(started) : undefined;
      });
    }
    log.debug("a session starts cold: the pool is empty and makes no box now");
    return undefined;
  }

  /** Resolves once the pool holds the idle boxes it aims for (or cannot make more now), or is closed. */
  full(): Promise<void> {
    if (this.settled()) return Promise.resolve();
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  /** Stops refilling and removes every idle box, and every box being made once it is up. */
  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.retry);
    clearTimeout(this.quietTimer);
    clearTimeout(this.shrinkTimer);
    for (const release of [...this.deferrals]) release();
    await this.scheduling;
    await this.fillsDone();
    const all = this.idle.splice(0);
    for (const entry of all) clearTimeout(entry.timer);
    await Promise.allSettled([...all.map((entry) => this.dispose(entry.warm)), ...this.disposing]);
    this.notify();
  }

  private fillsEnded: Array<() => void> = [];

  private fillsDone(): Promise<void> {
    if (this.filling.size === 0) return Promise.resolve();
    return new Promise((resolve) => this.fillsEnded.push(resolve));
  }

  private settled(): boolean {
    if (this.closed || this.idle.length >= this.target()) return true;
    // Held below its target (admission, a failing engine): nothing more is on its way.
    const quiet =
      !this.scheduling && !this.quietTimer && this.filling.size === 0 && this.deferrals.size === 0;
    return quiet && this.idle.length >= this.size;
  }

  private notify(): void {
    if (!this.settled()) return;
    for (const resolve of this.waiters.splice(0)) resolve();
  }

  private unclaimed(): Filling | undefined {
    for (const f of this.filling) if (!f.claim) return f;
    return undefined;
  }

  /** The box `filling` will be, for the session waiting for it; undefined after CLAIM_WAIT_MAX_MS. */
  private wait(filling: Filling): Promise<WarmBox | undefined> {
    return new Promise((resolve) => {
      const give = (warm: WarmBox | undefined) => {
        clearTimeout(timer);
        resolve(warm);
      };
      const timer = setTimeout(() => {
        if (filling.claim !== give) return;
        // Made later, the box joins the idle list.
        filling.claim = undefined;
        log.warn(`a warm box took over ${CLAIM_WAIT_MAX_MS / 1000} s to be made; its session starts cold`);
        resolve(undefined);
      }, CLAIM_WAIT_MAX_MS);
      timer.unref();
      filling.claim = give;
    });
  }

  private noteAsked(): void {
    const before = this.target();
    this.asked.push(Date.now());
    // A client asking thousands of times in the window does not grow the list past this.
    if (this.asked.length > MAX_ASKS_KEPT) this.asked.splice(0, this.asked.length - MAX_ASKS_KEPT);
    const now = this.target();
    if (now > before)
      log.debug(
        `a burst of ${largestBurst(this.asked)} session(s) asked for a warm box: the pool aims for ${now}`,
      );
    this.armShrink();
  }

  /** Looks again when the oldest ask leaves the demand window: the target may fall then. */
  private armShrink(): void {
    if (this.shrinkTimer || this.asked.length === 0 || this.closed) return;
    const inMs = this.asked[0]! + this.demandWindowMs + 50 - Date.now();
    this.shrinkTimer = setTimeout(() => {
      this.shrinkTimer = undefined;
      this.shrink();
    }, inMs);
    this.shrinkTimer.unref();
  }

  /** Demand gone: idle boxes past what the pool aims for now are removed, oldest first. */
  private shrink(): void {
    const target = this.target();
    this.armShrink();
    const surplus = this.idle.length + this.unclaimedCount() - target;
    if (surplus <= 0 || this.closed) return;
    const gone = this.idle.splice(0, Math.min(surplus, this.idle.length));
    log.info(
      `the largest burst of sessions asking for a warm box in the last ${Math.round(this.demandWindowMs / 1000)} s is ${largestBurst(this.asked)}: the pool shrinks to ${target} idle, removing ${gone.length}`,
    );
    for (const entry of gone) {
      clearTimeout(entry.timer);
      void this.dispose(entry.warm);
    }
    this.notify();
  }

  private unclaimedCount(): number {
    let n = 0;
    for (const f of this.filling) if (!f.claim) n++;
    return n;
  }

  /** The replacement of a box taken by a session: now, or once `until` settles. */
  private replaceAfter(until: Promise<unknown> | undefined): void {
    if (until === undefined) {
      this.refill();
      return;
    }
    // Counted until then, so that a fill loop still running (the pool just filled) does not
    // make the replacement now, beside the session's start.
    const release = () => {
      if (!this.deferrals.delete(release)) return;
      clearTimeout(timer);
      this.refill();
    };
    this.deferrals.add(release);
    const timer = setTimeout(release, REFILL_DEFER_MAX_MS);
    timer.unref();
    void until.catch(() => undefined).then(release);
  }

  /**
   * Whether sessions are still being asked for (the last under BURST_QUIET_MS ago): while the pool
   * still has an idle box, the boxes it makes then would take the CPU the burst's next sessions
   * need, so it makes them once the burst is over (a timer asks again). An empty pool makes them
   * at once: sessions are waiting for them.
   */
  private burstGoesOn(): boolean {
    const quietInMs = (this.asked.at(-1) ?? -Infinity) + BURST_QUIET_MS - Date.now();
    if (quietInMs <= 0) return false;
    if (!this.quietTimer) {
      this.quietTimer = setTimeout(() => {
        this.quietTimer = undefined;
        this.refill();
      }, quietInMs + 10);
      this.quietTimer.unref();
    }
    return true;
  }

  /** Boxes the pool holds or has on the way: idle, being made for no session, and owed. */
  private held(): number {
    return this.idle.length + this.unclaimedCount() + this.deferrals.size;
  }

  private refill(): void {
    if (this.closed) return;
    if (this.scheduling) {
      this.again = true;
      return;
    }
    this.again = false;
    this.scheduling = this.schedule()
      .catch((error: unknown) => log.warn(`the warm pool could not decide to grow: ${describeError(error)}`))
      .finally(() => {
        this.scheduling = undefined;
        if (this.again) this.refill();
        else this.notify();
      });
  }

  /** Starts boxes until the pool holds what it aims for; past its base, each only as admission allows. */
  private async schedule(): Promise<void> {
    while (!this.closed && this.retry === undefined) {
      const held = this.held();
      if (held >= this.target() || this.filling.size >= MAX_FILLING) return;
      if (this.idle.length > 0 && this.burstGoesOn()) return;
      if (held >= this.size) {
        const grown = held - this.size;
        if (this.room) {
          const verdict = growthVerdict(grown, await this.room());
          if (this.closed) return;
          if (verdict.key !== this.lastGrowth) {
            this.lastGrowth = verdict.key;
            log.info(
              `the warm pool (base ${this.size}, aiming for ${this.target()}, at most ${this.maxSize}): ${verdict.text}`,
            );
          }
          if (!verdict.grow) return;
          // Another box may have started or been taken during the await.
          if (this.held() !== held || this.filling.size >= MAX_FILLING) continue;
        }
      }
      this.startFill();
    }
  }

  private startFill(): void {
    const filling: Filling = {};
    this.filling.add(filling);
    void this.fillOne(filling)
      .then(
        () => {
          this.failures = 0;
        },
        (error: unknown) => {
          filling.claim?.(undefined);
          this.failures++;
          const waitMs = Math.min(MAX_BACKOFF_MS, 1000 * 2 ** this.failures);
          log.warn(`could not make a warm box (${describeError(error)}); trying again in ${waitMs / 1000} s`);
          clearTimeout(this.retry);
          this.retry = setTimeout(() => {
            this.retry = undefined;
            this.refill();
          }, waitMs);
          this.retry.unref();
        },
      )
      .finally(() => {
        this.filling.delete(filling);
        if (this.filling.size === 0) for (const resolve of this.fillsEnded.splice(0)) resolve();
        this.refill();
        this.notify();
      });
  }

  /** Makes one box; it goes to the session waiting for it, else to the idle list. */
  private async fillOne(filling: Filling): Promise<void> {
    const recipe = {
      profile: this.profile,
      ttlMs: this.ttlMs,
      prefillRepo: this.prefillRepo,
      keepTtlMs: this.keepTtlMs,
    };
    const made = await makeWarmBox(this.engine, recipe, () => this.closed);
    if (!made) {
      filling.claim?.(undefined);
      return;
    }
    const { warm } = made;
    if (filling.claim) {
      log.debug(
        `warm box ${warm.box.shortId} ready for the session waiting for it (session ${warm.sessionId})`,
      );
      filling.claim(warm);
      return;
    }
    if (this.idle.length >= this.target()) {
      // Demand fell while it was made (the window passed): the pool does not need it.
      await this.dispose(warm);
      return;
    }
    const entry: Idle = {
      warm,
      timer: setTimeout(() => void this.expire(entry, "idle past its time to live"), this.ttlMs),
    };
    entry.timer.unref();
    // The receiver ends while idle only if the box went away (removed by hand, the engine restarted).
    void warm.receiver.result.then(
      () => this.expire(entry, "its box stopped"),
      () => this.expire(entry, "its box stopped"),
    );
    this.idle.push(entry);
    log.debug(`warm box ${warm.box.shortId} ready (session ${warm.sessionId})`);
  }

  private async expire(entry: Idle, why: string): Promise<void> {
    const at = this.idle.indexOf(entry);
    if (at < 0) return;
    this.idle.splice(at, 1);
    clearTimeout(entry.timer);
    log.debug(`replacing warm box ${entry.warm.box.shortId}: ${why}`);
    this.refill();
    await this.dispose(entry.warm);
  }

  /** Removes a box the pool no longer wants; `close` waits for every such removal. */
  private dispose(warm: WarmBox): Promise<void> {
    const removing = disposeWarmBox(warm).finally(() => this.disposing.delete(removing));
    this.disposing.add(removing);
    return removing;
  }
}
