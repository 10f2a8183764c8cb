// Summaries of timed samples, and whether two figures differ by more than the machine's noise.

/** Median, p10, p90, p95 (nearest rank), min and max of samples, in the samples' unit. */
export function stats(samples) {
  const s = [...samples].sort((a, b) => a - b);
  const at = (q) => s[Math.min(s.length - 1, Math.max(0, Math.ceil(q * s.length) - 1))];
  return {
    median: at(0.5),
    p10: at(0.1),
    p90: at(0.9),
    p95: at(0.95),
    min: s[0],
    max: s[s.length - 1],
    n: s.length,
    samples: [...samples],
  };
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
 * returns the stats of each by name, marked as paired: sample i of each comes from round i.
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
  const round = Symbol("interleaved");
  return Object.fromEntries(names.map((n) => [n, { ...stats(samples[n]), paired: round }]));
}

/** P(X <= k) for X ~ Binomial(n, 1/2). */
function binomialCdf(k, n) {
  let term = 0.5 ** n;
  let sum = term;
  for (let i = 1; i <= k; i++) {
    term = (term * (n - i + 1)) / i;
    sum += term;
  }
  return Math.min(1, sum);
}

/** Standard normal upper tail. */
function normalTail(z) {
  // Abramowitz and Stegun 7.1.26, good to 1e-7: plenty for a verdict.
  const t = 1 / (1 + 0.3275911 * Math.abs(z) / Math.SQRT2);
  const erf =
    1 - (((((1.061405429 * t - 1.453152027) * t + 1.421413741) * t - 0.284496736) * t + 0.254829592) * t) *
      Math.exp(-(z * z) / 2);
  return z >= 0 ? (1 - erf) / 2 : (1 + erf) / 2;
}

/**
 * Whether figure `a` differs from baseline `b` by more than noise, at the 5 % level, two-sided.
 * Interleaved figures (paired round by round) get a sign test on the per-round differences; others
 * a Mann-Whitney U test. Returns { p, test, verdict } where verdict (for `a` against `b`) is
 * "lower", "higher", "within noise", or "too few runs to tell".
 */
export function compare(a, b) {
  if (!a?.samples?.length || !b?.samples?.length) return undefined;
  let p;
  let test;
  let lower;
  if (a.paired !== undefined && a.paired === b.paired && a.samples.length === b.samples.length) {
    const d = a.samples.map((x, i) => x - b.samples[i]).filter((x) => x !== 0);
    const below = d.filter((x) => x < 0).length;
    const k = Math.min(below, d.length - below);
    p = d.length === 0 ? 1 : Math.min(1, 2 * binomialCdf(k, d.length));
    test = `sign test, ${below} of ${d.length} rounds lower`;
    lower = below * 2 > d.length;
  } else {
    const n1 = a.samples.length;
    const n2 = b.samples.length;
    let u = 0;
    for (const x of a.samples) for (const y of b.samples) u += x < y ? 1 : x === y ? 0.5 : 0;
    const mean = (n1 * n2) / 2;
    const sd = Math.sqrt((n1 * n2 * (n1 + n2 + 1)) / 12);
    p = Math.min(1, 2 * normalTail(Math.abs(u - mean) / sd));
    test = "Mann-Whitney U";
    lower = u > mean;
  }
  // Under six paired rounds not even a clean sweep reaches 5 %.
  const decidable = test.startsWith("sign") ? 2 * 0.5 ** a.samples.length < 0.05 : true;
  const verdict = !decidable ? "too few runs to tell" : p >= 0.05 ? "within noise" : lower ? "lower" : "higher";
  return { p, test, verdict };
}
