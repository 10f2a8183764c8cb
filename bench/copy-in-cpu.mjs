// Does a session's copy-in wait on its box's CPU limit? The copy-in runs in the box (tar extracts
// the snapshot, git indexes it), so it is held to the box's limit (one CPU by default). This
// starts cold sessions of 10 and 10,000 files with that limit and with the limit raised to every
// core of the machine, in one interleaved loop, quiet and beside N CPU burners (the load the
// question is about): were the copy-in held back by its limit, the raised one would start faster.
//
//   npm run build && node bench/copy-in-cpu.mjs        (BENCH_RUNS=N rounds, default 10, half
//                                                       that at 10,000 files; BENCH_BURNERS=N
//                                                       burners, default 2; BENCH_FILES=10,10000
//                                                       the repository sizes)
//
// Writes bench/results/copy-in-cpu-<time>.json (git ignores it), or BENCH_RESULTS_DIR.
import { mkdtempSync } from "node:fs";
import { cpus, tmpdir } from "node:os";
import { join } from "node:path";
import { startBurners } from "./lib/burn.mjs";
import { makeRepo, removeDir } from "./lib/repos.mjs";
import { benchResults, spread } from "./lib/results.mjs";
import { compare, interleaved } from "./lib/stats.mjs";

const tmp = mkdtempSync(join(tmpdir(), "drydock-bench-"));
process.env.DRYDOCK_STATE_DIR = join(tmp, "state");

const { Engine } = await import("../dist/engine/engine.js");
const { defaultSandboxImage } = await import("../dist/sandbox/sandbox-image.js");
const { setLogLevel } = await import("../dist/util/log.js");
const { Session } = await import("../dist/session/session.js");

setLogLevel("warning");
const runs = Number(process.env.BENCH_RUNS ?? 10);
const burners = Number(process.env.BENCH_BURNERS ?? 2);
const say = (text) => process.stderr.write(`[bench] ${text}\n`);
const engine = await Engine.connect();
const image = process.env.DRYDOCK_IMAGE ?? (await defaultSandboxImage(engine));
const all = cpus().length;

const { results, noteLoad, write } = benchResults("copy-in-cpu", { image, runs, burners }, say);
const f = spread;

for (const files of (process.env.BENCH_FILES ?? "10,10000").split(",").map(Number)) {
  const repo = makeRepo(tmp, files);
  const label = `${files.toLocaleString("en-US")} files`;
  try {
    for (const load of ["quiet", `${burners} burner${burners === 1 ? "" : "s"}`]) {
      const burning = load === "quiet" ? undefined : startBurners(burners);
      noteLoad(`${label}, ${load}`);
      try {
        const start = (cpuLimit) => ({
          run: () => Session.create(engine, { repo, image, cpus: cpuLimit }),
          after: (s) => s.destroy(),
        });
        const r = await interleaved(files >= 10_000 ? Math.max(4, Math.ceil(runs / 2)) : runs, {
          one: start(1),
          every: start(all),
        });
        const versus = compare(r.one, r.every);
        results.rows.push({ files, load, oneCpu: r.one, everyCpu: r.every, versus });
        say(
          `cold ready, ${label}, ${load} | 1 CPU ${f(r.one)} | ${all} CPUs ${f(r.every)} | 1 CPU ${versus.verdict} (p ${versus.p.toFixed(3)}, ${versus.test})`,
        );
      } finally {
        burning?.stop();
      }
    }
  } finally {
    removeDir(repo);
  }
}

write();
removeDir(tmp);
