// Bursts of sessions: six `SessionManager.create` back to back (each asked for as the one before
// is ready) at 10,000 files, on the pool `drydock serve` keeps (a base of 2, prefilled with the
// repository), beside the pool as it was before it grew: the same base, fixed, where a session
// that finds it empty starts a cold box. The two run in one interleaved loop (the order swapped
// every round), so load on the machine falls on both alike. Between bursts the six sessions are
// removed and each pool is left to refill (a burst a minute or so apart, as an eval or a CI
// fan-out asks). The first burst after start (the pool at its base, not yet grown) is its own row.
//
//   npm run build && node bench/pool-burst.mjs      (BENCH_RUNS=N rounds, default 8)
//
// BENCH_FILES=N (default 10000) sets the repository's size, BENCH_BURST=N (default 6) the burst.
// Writes bench/results/pool-burst-<time>.json (git ignores it), or into BENCH_RESULTS_DIR.
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { makeRepo, removeDir } from "./lib/repos.mjs";
import { benchResults, spread } from "./lib/results.mjs";
import { compare, interleaved, stats } from "./lib/stats.mjs";

const tmp = mkdtempSync(join(tmpdir(), "drydock-bench-"));
process.env.DRYDOCK_STATE_DIR = join(tmp, "state");

const { Engine } = await import("../dist/engine/engine.js");
const { defaultSandboxImage } = await import("../dist/sandbox/sandbox-image.js");
const { setLogLevel } = await import("../dist/util/log.js");
const { SessionManager } = await import("../dist/session/session-manager.js");
const { Session } = await import("../dist/session/session.js");

setLogLevel("warning");
const runs = Number(process.env.BENCH_RUNS ?? 8);
const files = Number(process.env.BENCH_FILES ?? 10_000);
const burst = Number(process.env.BENCH_BURST ?? 6);
const BASE = 2;
const MAX = 8;
const TARGET_MS = 150;
const say = (text) => process.stderr.write(`[bench] ${text}\n`);
const engine = await Engine.connect();
const image = process.env.DRYDOCK_IMAGE ?? (await defaultSandboxImage(engine));

const { results, noteLoad, write } = benchResults(
  "pool-burst",
  { image, runs, files, burst, base: BASE, max: MAX },
  say,
);

const repo = makeRepo(tmp, files);
const pool = (maxSize) => ({ size: BASE, maxSize, profile: { image }, prefillRepo: repo });
const grows = await SessionManager.start(engine, { pool: pool(MAX) });
const fixed = await SessionManager.start(engine, { pool: pool(BASE) });
// Each create's time and whether it got a pool box, by alternative, round by round.
const times = { grows: [], fixed: [] };
const warm = { grows: [], fixed: [] };

/** Six creates back to back; the fixed pool's sessions start cold once it is empty, as before. */
async function burstOf(name, manager) {
  const sessions = [];
  const round = [];
  const pooled = [];
  try {
    for (let i = 0; i < burst; i++) {
      const t = performance.now();
      const session =
        name === "fixed" && manager.pool.idleCount === 0
          ? await Session.create(engine, { repo, image })
          : await manager.create({ repo, image });
      round.push(performance.now() - t);
      pooled.push(session.warm);
      sessions.push(session);
    }
  } finally {
    times[name].push(round);
    warm[name].push(pooled);
  }
  return sessions;
}

async function removeAll(manager, sessions) {
  for (const s of sessions) {
    if (manager.has(s.id)) await manager.destroy(s.id);
    else await s.destroy();
  }
  // The pool refills now, not during the other alternative's burst.
  await manager.pool.full();
}

noteLoad("start");
try {
  await Promise.all([grows.pool.full(), fixed.pool.full()]);
  await interleaved(runs, {
    grows: { run: () => burstOf("grows", grows), after: (s) => removeAll(grows, s) },
    fixed: { run: () => burstOf("fixed", fixed), after: (s) => removeAll(fixed, s) },
  });
} finally {
  await grows.closeAll();
  await fixed.closeAll();
  removeDir(repo);
}

// Paired round by round and create by create, so the sign test sets each beside its counterpart.
const paired = (samples, mark) => ({ ...stats(samples), paired: mark });
function row(name, drydock, baselineName, baseline, { target } = {}) {
  const versus = baseline ? compare(drydock, baseline) : undefined;
  const met = target === undefined ? undefined : drydock.max <= target;
  results.rows.push({ name, drydock, baselineName, baseline, versus, targetMs: target, met });
  say(
    `${name} | ${spread(drydock)}, max ${drydock.max.toFixed(1)} (n ${drydock.n})` +
      (baseline
        ? ` | ${baselineName} ${spread(baseline)}, max ${baseline.max.toFixed(1)} | ${versus.verdict} (p ${versus.p.toFixed(3)}, ${versus.test})`
        : "") +
      (target === undefined
        ? ""
        : ` | every one under ${target} ms: ${met ? "yes" : `no, ${drydock.samples.filter((ms) => ms > target).length} over`}`),
  );
}

const label = `${files.toLocaleString("en-US")} files`;
const fixedName = `a fixed pool of ${BASE}, cold once empty (before)`;
// Round 0 is each pool's first burst after start: the growing one at its base, not yet grown.
const [firstGrows, ...restGrows] = times.grows;
const [firstFixed, ...restFixed] = times.fixed;
const mark = Symbol("by round and create");
row(
  `each of ${burst} creates back to back, pool grown by earlier bursts (${label})`,
  paired(restGrows.flat(), mark),
  fixedName,
  paired(restFixed.flat(), mark),
  { target: TARGET_MS },
);
const slowest = Symbol("by round");
row(
  `slowest create of each burst (${label})`,
  paired(
    restGrows.map((r) => Math.max(...r)),
    slowest,
  ),
  fixedName,
  paired(
    restFixed.map((r) => Math.max(...r)),
    slowest,
  ),
  { target: TARGET_MS },
);
row(
  `each create of the first burst after start, pool at its base (${label})`,
  stats(firstGrows),
  fixedName,
  stats(firstFixed),
);
// The machine's own figure for the same start: the fixed pool's creates that took an idle box.
const fixedWarm = restFixed.flatMap((r, i) => r.filter((_, j) => warm.fixed[i + 1][j]));
if (fixedWarm.length > 0) {
  row(
    `reference: a create that took an idle box of the fixed pool, same rounds (${label})`,
    stats(fixedWarm),
  );
}
const pooled = (name) => warm[name].slice(1).flat().filter(Boolean).length;
const total = restGrows.flat().length;
say(
  `sessions on a pool box after the first burst: ${pooled("grows")} of ${total} (fixed pool: ${pooled("fixed")} of ${total}); first burst: ${warm.grows[0].filter(Boolean).length} of ${burst} (fixed: ${warm.fixed[0].filter(Boolean).length})`,
);
results.pooled = { grows: warm.grows, fixed: warm.fixed };
results.creates = times;
write();
removeDir(tmp);
