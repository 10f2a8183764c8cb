// Checkpoint, restore and fork of a live session, at 10 and 10,000 files with 20 of them changed,
// each beside what Docker alone offers for the same: `docker commit` of a box holding the same
// tree (its files in the container's own layer, which commit can see), and `docker run` of the
// image that commit made (a restore or a fork by Docker is a new container from it). drydock and
// its baseline run in one interleaved loop (the order swapped every round), so load on the machine
// falls on both alike; each row gives the median, p10-p90 and a sign test on the rounds.
//
//   npm run build && node bench/checkpoint.mjs        (BENCH_RUNS=N rounds, default 12)
//
// BENCH_ONLY=fork times only the forks; BENCH_FILES=10000 (a comma-separated list) only those
// sizes. BENCH_LARGE_MB=N (default 64; 0: none) also forks a checkpoint of N MiB of random files,
// whose pack streams from box to box, once and twice at a time, with the peak of this process's
// resident memory before and after (VmHWM).
//
// Writes bench/results/checkpoint-<time>.json (git ignores it), or BENCH_RESULTS_DIR.
import { execFileSync, spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { makeRepo, removeDir } from "./lib/repos.mjs";
import { benchResults, spread } from "./lib/results.mjs";
import { compare, interleaved, timed } from "./lib/stats.mjs";

const tmp = mkdtempSync(join(tmpdir(), "drydock-bench-"));
process.env.DRYDOCK_STATE_DIR = join(tmp, "state");

const { Engine } = await import("../dist/engine/engine.js");
const { defaultSandboxImage } = await import("../dist/sandbox/sandbox-image.js");
const { setLogLevel } = await import("../dist/util/log.js");
const { SessionManager } = await import("../dist/session/session-manager.js");
const { forkSession } = await import("../dist/session/session-fork.js");

setLogLevel("warning");
const runs = Number(process.env.BENCH_RUNS ?? 12);
const onlyFork = process.env.BENCH_ONLY === "fork";
const sizes = (process.env.BENCH_FILES ?? "10,10000").split(",").map(Number);
const largeMB = Number(process.env.BENCH_LARGE_MB ?? 64);
/** This process's peak resident memory so far (VmHWM), in MiB. */
const peakMB = () => Number(/^VmHWM:\s+(\d+) kB$/m.exec(readFileSync("/proc/self/status", "utf8"))[1]) / 1024;
const say = (text) => process.stderr.write(`[bench] ${text}\n`);
const engine = await Engine.connect();
const image = process.env.DRYDOCK_IMAGE ?? (await defaultSandboxImage(engine));
const docker = (...args) => execFileSync("docker", args, { encoding: "utf8", maxBuffer: 1 << 26 }).trim();

const { results, noteLoad, write } = benchResults("checkpoint", { image, runs }, say);
const f = spread;
function row(name, drydock, baselineName, baseline, target) {
  const versus = baseline ? compare(drydock, baseline) : undefined;
  const met = target === undefined ? undefined : drydock.median <= target;
  results.rows.push({ name, drydock, baselineName, baseline, versus, targetMs: target, met });
  say(
    `${name} | ${f(drydock)}${baseline ? ` | ${baselineName} ${f(baseline)} | ${versus.verdict} (p ${versus.p.toFixed(3)}, ${versus.test})` : ""}` +
      (target === undefined ? "" : ` | target ${target} ms ${met ? "met" : `missed by ${(drydock.median - target).toFixed(1)} ms`}`),
  );
}

// The 20 changed paths: files edited (18 where there are that many), files added to make 19, and
// the last file removed; the working directory moved. The mess a restore undoes: the same files
// edited again, the added ones removed, the removed one back, a new one, the shell elsewhere.
function changes(files) {
  const dirs = Math.min(100, files);
  const at = (i) => `pkg${i % dirs}/mod${i}.js`;
  const edited = Array.from({ length: Math.min(18, files - 1) }, (_, i) => at(i));
  const added = Array.from({ length: 19 - edited.length }, (_, i) => `added-${i}.js`);
  const removed = at(files - 1);
  return {
    change: `cd /workspace && for f in ${edited.join(" ")}; do echo change >> $f; done && for f in ${added.join(" ")}; do echo new > $f; done && rm ${removed} && cd pkg1`,
    mess: `cd /workspace && for f in ${edited.join(" ")}; do echo mess >> $f; done && rm -f ${added.join(" ")} && mkdir -p ${removed.split("/")[0]} && echo back > ${removed} && echo junk > junk.js && cd /tmp`,
  };
}

for (const files of sizes) {
  const { change: CHANGE, mess: MESS } = changes(files);
  const label = `${files.toLocaleString("en-US")} files`;
  const repo = makeRepo(tmp, files);
  // The pool holds boxes prefilled with the repository, as `serve` keeps them for the repository
  // it serves: a fork lands on the prefilled commit and only what differs is written.
  const manager = await SessionManager.start(engine, { pool: { size: 2, profile: { image }, prefillRepo: repo } });
  // A box holding the same tree in its own layer, for docker commit.
  const plain = docker("run", "-d", "--network", "none", "--user", "0", image, "sleep", "infinity");
  try {
    const source = await manager.create({ repo, image });
    await manager.pool.full();
    const changed = await source.bash(CHANGE);
    if (changed.exitCode !== 0) throw new Error(changed.output);
    docker("exec", plain, "mkdir", "-p", "/work");
    docker("cp", `${repo}/.`, `${plain}:/work/`);
    docker("exec", plain, "bash", "-c", CHANGE.replaceAll("/workspace", "/work"));

    const images = [];
    noteLoad(`${label}: checkpoint`);
    if (onlyFork) await source.checkpoint("bench");
    const save = onlyFork ? undefined : await interleaved(runs, {
      drydock: { run: () => source.checkpoint("bench") },
      docker: {
        run: () => docker("commit", plain),
        after: (id) => void spawnSync("docker", ["rmi", "-f", id]),
      },
    });
    if (save) row(`checkpoint (${label}, 20 changed)`, save.drydock, "docker commit", save.docker, files === 10_000 ? 50 : undefined);

    // A session's first checkpoint: a fresh session from the pool each round, the same 20 changes
    // made through its shell, then at once its first checkpoint (nothing waited for but the
    // changes: what the session still does in the background when it is ready is in the time).
    noteLoad(`${label}: a session's first checkpoint`);
    const firstSave = onlyFork ? undefined : await interleaved(runs, {
      drydock: {
        before: async () => {
          await manager.pool.full();
          const s = await manager.create({ repo, image });
          const r = await s.bash(CHANGE);
          if (r.exitCode !== 0) throw new Error(r.output);
          return s;
        },
        run: (s) => s.checkpoint("first"),
        after: async (_value, s) => {
          await manager.destroy(s.id);
          await manager.pool.full();
        },
      },
      docker: {
        run: () => docker("commit", plain),
        after: (id) => void spawnSync("docker", ["rmi", "-f", id]),
      },
    });
    if (firstSave) row(`a session's first checkpoint (${label}, 20 changed)`, firstSave.drydock, "docker commit", firstSave.docker, files === 10_000 ? 50 : undefined);

    const committed = docker("commit", plain);
    images.push(committed);
    noteLoad(`${label}: restore`);
    const back = onlyFork ? undefined : await interleaved(runs, {
      drydock: {
        before: async () => {
          const r = await source.bash(MESS);
          if (r.exitCode !== 0) throw new Error(r.output);
        },
        run: () => source.restore("bench"),
      },
      docker: {
        run: () => docker("run", "-d", "--network", "none", committed, "sleep", "infinity"),
        after: (id) => void spawnSync("docker", ["rm", "-f", id]),
      },
    });
    if (back) row(`restore (${label}, 20 changed)`, back.drydock, "docker run of the committed image", back.docker, files === 10_000 ? 100 : undefined);

    noteLoad(`${label}: fork`);
    const start = (options) => manager.create(options);
    const remove = (s) => manager.destroy(s.id);
    let cold = 0;
    const forked = async ([s]) => {
      if (!s.warm) cold++;
      await remove(s);
      await manager.pool.full();
    };
    // "bench" is forked every round: after the first, its pack is the one the server kept. "first"
    // is saved again before each round (untimed; a new save is a new checkpoint), so each of its
    // forks is the checkpoint's first and its pack is made in the source's box.
    const fork = await interleaved(runs, {
      drydock: {
        before: () => manager.pool.full(),
        run: () => forkSession(source, { n: 1, checkpoint: "bench" }, start, remove),
        after: forked,
      },
      first: {
        before: async () => {
          await source.checkpoint("first");
          // The replaced one is dropped after the reply, in the box's queue: not in the timing.
          await source.oneDiffAtATime(async () => undefined);
          await manager.pool.full();
        },
        run: () => forkSession(source, { n: 1, checkpoint: "first" }, start, remove),
        after: forked,
      },
      docker: {
        run: () => docker("run", "-d", "--network", "none", committed, "sleep", "infinity"),
        after: (id) => void spawnSync("docker", ["rm", "-f", id]),
      },
    });
    row(`fork, one copy, warm pool (${label})`, fork.drydock, "docker run of the committed image", fork.docker, files === 10_000 ? 150 : undefined);
    row(`fork, one copy, warm pool, the checkpoint's first fork (${label})`, fork.first, "docker run of the committed image", fork.docker, files === 10_000 ? 150 : undefined);
    if (cold) say(`${cold} fork(s) did not get a warm box`);

    // Two at once, both from the pool, per copy.
    const perCopyOf = (t, n) => ({ ...t, median: t.median / n, p10: t.p10 / n, p90: t.p90 / n, p95: t.p95 / n, samples: t.samples.map((s) => s / n) });
    const two = await timed(
      Math.max(3, Math.ceil(runs / 2)),
      () => forkSession(source, { n: 2, checkpoint: "bench" }, start, remove),
      {
        before: () => manager.pool.full(),
        after: async (made) => {
          if (made.some((s) => !s.warm)) cold++;
          await Promise.all(made.map(remove));
        },
      },
    );
    row(`fork, 2 at once, warm pool, per copy (${label})`, perCopyOf(two, 2), undefined, undefined, files === 10_000 ? 150 : undefined);

    // Four at once (two from the pool, two cold), per copy.
    const four = await timed(
      Math.max(3, Math.ceil(runs / 4)),
      () => forkSession(source, { n: 4, checkpoint: "bench" }, start, remove),
      {
        before: () => manager.pool.full(),
        after: async (made) => {
          await Promise.all(made.map(remove));
        },
      },
    );
    row(`fork, 4 at once, per copy (${label})`, perCopyOf(four, 4));
    for (const id of images) spawnSync("docker", ["rmi", "-f", id]);
  } finally {
    spawnSync("docker", ["rm", "-f", plain]);
    await manager.closeAll();
    removeDir(repo);
  }
}

// A checkpoint whose pack is past what the host holds: it streams from box to box.
if (largeMB > 0) {
  const repo = makeRepo(tmp, 10);
  const manager = await SessionManager.start(engine, {});
  try {
    const source = await manager.create({ repo, image });
    const made = await source.bash(
      `mkdir -p big && for i in $(seq 1 ${Math.ceil(largeMB / 8)}); do head -c 8M /dev/urandom > big/f$i.bin; done`,
      { timeoutMs: 600_000 },
    );
    if (made.exitCode !== 0) throw new Error(made.output);
    await source.checkpoint("large");
    const start = (options) => manager.create(options);
    const remove = (s) => manager.destroy(s.id);
    for (const n of [1, 2]) {
      noteLoad(`large fork into ${n}`);
      const before = peakMB();
      const t = await timed(3, () => forkSession(source, { n, checkpoint: "large" }, start, remove), {
        warmup: 0,
        after: async (forks) => void (await Promise.all(forks.map(remove))),
      });
      row(`fork of ${largeMB} MiB of random files, ${n} at once, whole call (cold boxes)`, t);
      say(`  peak resident memory of this process: ${before.toFixed(0)} MiB before, ${peakMB().toFixed(0)} MiB after`);
      results.rows.at(-1).peakMB = { before, after: peakMB() };
    }
  } finally {
    await manager.closeAll();
    removeDir(repo);
  }
}

write();
removeDir(tmp);
