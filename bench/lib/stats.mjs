// Medians and 95th percentiles of timed samples.

/** Median and p95 (nearest rank) of samples, in the samples' unit. */
export function stats(samples) {
  const s = [...samples].sort((a, b) => a - b);
  const at = (q) => s[Math.min(s.length - 1, Math.max(0, Math.ceil(q * s.length) - 1))];
  return { median: at(0.5), p95: at(0.95), n: s.length };
}

/** Runs `fn` `runs` times (after `warmup` untimed runs) and returns the stats of its durations in ms. */
export async function timed(runs, fn, { warmup = 1, before, after } = {}) {
  const samples = [];
  for (let i = 0; i < warmup + runs; i++) {
    const context = before ? await before(i) : undefined;
    const t = performance.now();
    const value = await fn(context, i);
    const ms = performance.now() - t;
    if (after) await after(value, context, i);
    if (i >= warmup) samples.push(ms);
  }
  return stats(samples);
}

/**
 * Runs alternatives in one loop, in turn (their order swapped every round), so that noise on the
 * machine falls on all of them alike. `alternatives` maps a name to { run, before?, after? };
 * returns the stats of each by name.
 */
export async function interleaved(runs, alternatives, { warmup = 1 } = {}) {
  const names = Object.keys(alternatives);
  const samples = Object.fromEntries(names.map((n) => [n, []]));
  for (let i = 0; i < warmup + runs; i++) {
    const order = i % 2 === 0 ? names : [...names].reverse();
    for (const name of order) {
      const { run, before, after } = alternatives[name];
      const context = before ? await before(i) : undefined;
      const t = performance.now();
      const value = await run(context, i);
      const ms = performance.now() - t;
      if (after) await after(value, context, i);
      if (i >= warmup) samples[name].push(ms);
    }
  }
  return Object.fromEntries(names.map((n) => [n, stats(samples[n])]));
}
