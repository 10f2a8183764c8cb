// Checkpoint, restore and fork of a live session, at 10 and 10,000 files with 20 of them changed,
// each beside what Docker alone offers for the same: `docker commit` of a box holding the same
// tree (its files in the container's own layer, which commit can see), and `docker run` of the
// image that commit made (a restore or a fork by Docker is a new container from it). drydock and
// its baseline run in one interleaved loop (the order swapped every round), so load on the machine
// falls on both alike; each row gives the median, p10-p90 and a sign test on the rounds.
//
//   npm run build && node bench/checkpoint.mjs        (BENCH_RUNS=N rounds, default 12)
//
// Writes bench/results/checkpoint-<time>.json (git ignores it), or BENCH_RESULTS_DIR.
import { execFileSync, spawnSync } from "node:child_process";
import { mkdtempSync } from "node:fs";
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

for (const files of [10, 10_000]) {
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
    const save = await interleaved(runs, {
      drydock: { run: () => source.checkpoint("bench") },
      docker: {
        run: () => docker("commit", plain),
        after: (id) => void spawnSync("docker", ["rmi", "-f", id]),
      },
    });
    row(`checkpoint (${label}, 20 changed)`, save.drydock, "docker commit", save.docker, files === 10_000 ? 50 : undefined);

    const committed = docker("commit", plain);
    images.push(committed);
    noteLoad(`${label}: restore`);
    const back = await interleaved(runs, {
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
    row(`restore (${label}, 20 changed)`, back.drydock, "docker run of the committed image", back.docker, files === 10_000 ? 100 : undefined);

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
    const perCopy = { ...four, median: four.median / 4, p10: four.p10 / 4, p90: four.p90 / 4, p95: four.p95 / 4, samples: four.samples.map((s) => s / 4) };
    row(`fork, 4 at once, per copy (${label})`, perCopy);
    for (const id of images) spawnSync("docker", ["rmi", "-f", id]);
  } finally {
    spawnSync("docker", ["rm", "-f", plain]);
    await manager.closeAll();
    removeDir(repo);
  }
}

write();
removeDir(tmp);
