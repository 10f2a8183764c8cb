// A session's start in a repository with an untracked, unignored node_modules (as `npm install`
// leaves one when nothing ignores it): by default the tree is left out of the box; with
// includeUntrackedDependencies it is copied, as every start did before; the floor is the same
// repository with node_modules ignored (nothing to list or size). All (and, given
// BENCH_BASELINE_DIST, another build's dist, e.g. the previous release's) run in one interleaved
// loop, so load on the machine falls on all alike. Cold starts: a new box each time, no pool.
//
//   npm run build && node bench/untracked-dependencies.mjs   (BENCH_RUNS=N rounds, default 6;
//   BENCH_FILES=N files in node_modules, default 10,000)
//
// Writes bench/results/untracked-dependencies-<time>.json (git ignores it), or BENCH_RESULTS_DIR.
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { benchResults, spread } from "./lib/results.mjs";
import { interleaved } from "./lib/stats.mjs";

const runs = Number(process.env.BENCH_RUNS ?? 6);
const files = Number(process.env.BENCH_FILES ?? 10_000);
const say = (text) => process.stderr.write(`[bench] ${text}\n`);
const scratch = mkdtempSync(join(tmpdir(), "drydock-bench-trees-"));
process.env.DRYDOCK_STATE_DIR = join(scratch, "state");
const { results, noteLoad, write } = benchResults("untracked-dependencies", { runs, files }, say);

const dist = new URL("../dist/", import.meta.url).pathname;
const { Engine } = await import(join(dist, "engine/engine.js"));
const { Session } = await import(join(dist, "session/session.js"));
const { defaultSandboxImage } = await import(join(dist, "sandbox/sandbox-image.js"));
const baselineDist = process.env.BENCH_BASELINE_DIST && resolve(process.env.BENCH_BASELINE_DIST);
const Baseline = baselineDist ? (await import(join(baselineDist, "session/session.js"))).Session : undefined;

const engine = await Engine.connect();
const image = process.env.DRYDOCK_IMAGE ?? (await defaultSandboxImage(engine));

// A small project, committed, and an installed node_modules of `files` files of 0.5-4 KiB (a real
// one averages a few KiB), in packages of 40 files.
const repo = join(scratch, "repo");
mkdirSync(join(repo, "src"), { recursive: true });
for (let i = 0; i < 20; i++) writeFileSync(join(repo, "src", `m${i}.ts`), `export const m${i} = ${i};\n`);
writeFileSync(join(repo, "package.json"), '{ "name": "app" }\n');
const git = (...args) =>
  execFileSync("git", ["-c", "user.name=b", "-c", "user.email=b@b", ...args], { cwd: repo, stdio: "pipe" });
git("init", "-q");
git("add", "-A");
git("commit", "-qm", "app");
for (let i = 0; i < files; i++) {
  const dir = join(repo, "node_modules", `pkg${Math.floor(i / 40)}`, "lib");
  if (i % 40 === 0) mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, `f${i}.js`), `// ${i}\n${"x".repeat(512 + ((i * 7919) % 3584))}\n`);
}
say(`repository with ${files.toLocaleString("en-US")} untracked files in node_modules at ${repo}`);
// One copy per alternative: a start that copies node_modules while the working tree is dirty
// records it in a host commit, whose 10,000 loose objects every later copy-in of that repository
// would send with .git.
const copyOf = (name) => {
  const copy = join(scratch, name);
  execFileSync("cp", ["-a", repo, copy]);
  return copy;
};
const [copied, ignored, baseline] = ["copied", "ignored", "baseline"].map(copyOf);
writeFileSync(join(ignored, ".git", "info", "exclude"), "node_modules/\n");

const destroy = (session) => session.destroy();
const alternatives = {
  "left out (default)": { run: () => Session.create(engine, { repo, image }), after: destroy },
  "copied (includeUntrackedDependencies)": {
    run: () => Session.create(engine, { repo: copied, image, includeUntrackedDependencies: true }),
    after: destroy,
  },
  "floor (node_modules ignored)": {
    run: () => Session.create(engine, { repo: ignored, image }),
    after: destroy,
  },
  ...(Baseline
    ? {
        [`baseline (${baselineDist})`]: {
          run: () => Baseline.create(engine, { repo: baseline, image }),
          after: destroy,
        },
      }
    : {}),
};
try {
  noteLoad("start");
  const measured = await interleaved(runs, alternatives);
  for (const [name, s] of Object.entries(measured)) {
    say(`session ready, ${name}: ${spread(s)} ms`);
    results.rows.push({ name, ...s });
  }
  write();
} finally {
  rmSync(scratch, { recursive: true, force: true });
}
