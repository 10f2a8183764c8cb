/**
 * How far a warm pool grows with demand, and when admission stops it: pure, so the rules are
 * tested without an engine. A pool keeps its base size (`--pool N`) whatever happens; past it, it
 * aims for the largest burst of sessions that asked it for a box within the demand window (six
 * asked within a minute make it hold six for the next burst; one a minute, steadily, is no burst),
 * at most its ceiling (`--pool-max`), and each box past the base is made only when admission says
 * it fits.
 */

/** How long a session asking the pool for a box counts as demand; with none in it the pool is back to its base. */
export const DEMAND_WINDOW_MS = 5 * 60_000;

/** Sessions asked within this span of one another count as one burst. */
export const BURST_SPAN_MS = 60_000;

/** The ceiling of a pool when none is given (`--pool-max`): this, or the base when that is larger. */
export const DEFAULT_POOL_MAX = 8;

/** The idle boxes a pool aims for: its base, raised to the largest recent burst, at most `max`. */
export function poolTarget(base: number, max: number, burst: number): number {
  return Math.max(base, Math.min(max, burst));
}

/** The most asks (times in ms, oldest first) that fall within any `spanMs` of one another. */
export function largestBurst(asked: readonly number[], spanMs = BURST_SPAN_MS): number {
  let most = 0;
  let from = 0;
  for (let to = 0; to < asked.length; to++) {
    while (asked[to]! - asked[from]! >= spanMs) from++;
    most = Math.max(most, to - from + 1);
  }
  return most;
}

/** What admission says of one more session now (admission-figure.ts). */
export interface PoolRoom {
  /** How many more sessions fit. */
  fit: number;
  /** Why, in one sentence with its numbers. */
  why: string;
}

export interface GrowthVerdict {
  grow: boolean;
  /** The decision in words, with its numbers, for the log. */
  text: string;
  /** The decision without admission's changing figures: the same key is logged once. */
  key: string;
}

const boxes = (n: number): string => `${n} box${n === 1 ? "" : "es"}`;

/**
 * Whether a pool holding `grown` boxes past its base (idle or being made) may make one more.
 * Each counts as a session already (conservative: an idle box admission has measured counts
 * twice), and one place is always left, so a session the pool cannot serve, or one asked for
 * while the pool's boxes are still idle, is not refused because of them.
 */
export function growthVerdict(grown: number, room: PoolRoom): GrowthVerdict {
  const grow = room.fit - grown >= 2;
  const text =
    `it holds ${boxes(grown)} past its base, ` +
    `${grow ? "so it makes one more" : "so it makes no more (it leaves one place for a session it does not serve)"}: ${room.why}`;
  return { grow, text, key: `${grow} ${grown} ${room.fit}` };
}
