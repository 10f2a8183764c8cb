// Benchmarks: figures, not asserts. `npm run bench` after `npm run build` and `drydock image
// build`. Each figure is measured beside its baseline in the same run (most in one interleaved
// loop). Writes bench/results/run-<time>.json (untracked) and prints a table with each figure's
// spread and whether it differs from its baseline by more than noise; `--save` also writes the
// tracked bench/results/latest.json and bench/results/session-ready.svg. Every figure is then set
// beside the saved one (latest.json, as it was before this run) and those that moved beyond their
// spread are named; `--fail-on-regression` makes a figure that got worse exit 1.
//
//
//   --burn N         under an artificial load: N CPU burners run beside the whole bench (each
//                    figure is then set beside the saved, quiet one: how much it degrades); not
//                    with --save or --fail-on-regression
//   BENCH_RUNS=N     runs per figure (default 30; the 10,000-file and concurrent ones use fewer)
//   BENCH_ONLY=a,b   only these sections: ready, shell, output, editor, diff, first, aider, concurrent, env
//   BENCH_RESULTS_DIR=dir  where results go (default bench/results)
import { existsSync, mkdtempSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { cpus, loadavg, tmpdir, totalmem } from "node:os";
import { join, relative, resolve } from "node:path";
import { sessionReadyChart } from "./lib/chart.mjs";
import { makeRepo, removeDir } from "./lib/repos.mjs";
import { compare } from "./lib/stats.mjs";
import { compareToSaved, savedFiguresTable } from "./lib/saved-figures.mjs";
import { burnArgument, startBurners } from "./lib/burn.mjs";

const args = process.argv.slice(2);
const burn = burnArgument(args);
const unknown = args.filter((a) => a !== "--save" && a !== "--fail-on-regression" && !burn.used.includes(a));
if (unknown.length > 0) {
  console.error(
    `bench: unknown argument ${unknown[0]}; the arguments are --save (also write the tracked bench/results/latest.json), --fail-on-regression (exit 1 when a figure moved beyond its spread the wrong way against latest.json) and --burn N (N CPU burners beside the bench)`,
  );
  process.exit(2);
}
const save = args.includes("--save");
const failOnRegression = args.includes("--fail-on-regression");
if (burn.error) {
  console.error(`bench: ${burn.error}`);
  process.exit(2);
}
if (burn.n !== undefined && (save || failOnRegression)) {
  console.error(
    `bench: --burn measures under an artificial load, so its figures are not saved (--save) or held against the saved ones (--fail-on-regression); run those without --burn`,
  );
  process.exit(2);
}

const tmp = mkdtempSync(join(tmpdir(), "drydock-bench-"));
// Sessions keep their gateway directories and the snapshot cache here, not in the user's state.
const stateDir = join(tmp, "state");
process.env.DRYDOCK_STATE_DIR = stateDir;

const { Engine } = await import("../dist/engine/engine.js");
const { defaultSandboxImage } = await import("../dist/sandbox/sandbox-image.js");
const { setLogLevel } = await import("../dist/util/log.js");
const { sessionReady } = await import("./session-ready.mjs");
const { shellRoundTrip } = await import("./shell.mjs");
const { bashOutputRows } = await import("./bash-output.mjs");
const { fileEditor, diffOut } = await import("./file-editor.mjs");
const { firstCall } = await import("./first-call.mjs");
const { aiderRun } = await import("./aider.mjs");
const { concurrentSessions } = await import("./concurrent.mjs");
const { environmentBench } = await import("./environment.mjs");

setLogLevel("warning");
const runs = Number(process.env.BENCH_RUNS ?? 30);
const only = process.env.BENCH_ONLY?.split(",").map((s) => s.trim());
const say = (text) => process.stderr.write(`[bench] ${text}\n`);

const engine = await Engine.connect();
const image = process.env.DRYDOCK_IMAGE ?? (await defaultSandboxImage(engine));
const version = await engine.version();
const results = {
  date: new Date().toISOString(),
  machine: {
    cpus: cpus().length,
    model: cpus()[0]?.model,
    memoryGiB: Math.round(totalmem() / 2 ** 30),
    engine: version.version,
    os: version.os,
    node: process.version,
  },
  image,
  runs,
  // CPU burners the bench ran beside every figure (--burn), and the load average (1, 5, 15 min)
  // as each section starts and at the end.
  burners: burn.n ?? 0,
  load: [],
  rows: [],
  series: {},
};
const noteLoad = (at) => {
  const [one, five, fifteen] = loadavg();
  results.load.push({ at, one, five, fifteen });
};
const repos = new Map();
const ctx = {
  engine,
  image,
  runs,
  tmp,
  stateDir,
  results,
  say,
  /** A packed repository of `files` files, made once per run. */
  repo(files) {
    if (!repos.has(files)) repos.set(files, makeRepo(tmp, files));
    return repos.get(files);
  },
  row(group, name, drydock, baselineName, baseline, unit = "ms") {
    const versus = compare(drydock, baseline);
    results.rows.push({ group, name, unit, drydock, baselineName, baseline, versus });
    const f = (s) => (s ? `${s.median.toFixed(1)} (p10-p90 ${s.p10.toFixed(1)}-${s.p90.toFixed(1)})` : "");
    const v = versus ? ` | ${verdictText(versus)}` : "";
    say(`${group} | ${name} | ${f(drydock)}${baselineName ? ` | ${baselineName} ${f(baseline)}` : ""}${v}`);
  },
};

const sections = [
  ["ready", sessionReady],
  ["shell", shellRoundTrip],
  ["output", bashOutputRows],
  ["editor", fileEditor],
  ["diff", diffOut],
  ["first", firstCall],
  ["aider", aiderRun],
  ["concurrent", concurrentSessions],
  ["env", environmentBench],
];
const resultsDir = resolve(process.env.BENCH_RESULTS_DIR ?? new URL("./results/", import.meta.url).pathname);
mkdirSync(resultsDir, { recursive: true });
const unknownSections = (only ?? []).filter((name) => !sections.some(([known]) => known === name));
if (unknownSections.length > 0) {
  console.error(
    `bench: BENCH_ONLY names ${unknownSections.join(", ")}, which is no section; the sections are ${sections.map(([n]) => n).join(", ")}`,
  );
  removeDir(tmp);
  process.exit(2);
}
// The saved figures, read before this run may replace them (--save).
const savedPath = join(resultsDir, "latest.json");
const savedRun = existsSync(savedPath) ? JSON.parse(readFileSync(savedPath, "utf8")) : undefined;
const burners = burn.n === undefined ? undefined : startBurners(burn.n);
if (burners) say(`${burn.n} CPU burner(s) running beside the bench (pids ${burners.pids.join(", ")})`);
try {
  for (const [name, section] of sections) {
    if (only && !only.includes(name)) continue;
    noteLoad(name);
    say(`${name}: ${runs} runs (load average ${loadavg()[0].toFixed(2)})`);
    try {
      await section(ctx);
    } catch (error) {
      say(`${name} failed: ${error instanceof Error ? error.stack : error}`);
      results.rows.push({ group: name, name: "not measured", error: String(error) });
      process.exitCode = 1;
    }
  }
} finally {
  noteLoad("end");
  burners?.stop();
  for (const dir of repos.values()) removeDir(dir);
  removeDir(tmp);
}

const stamp = results.date.replace(/[:.]/g, "-");
const json = JSON.stringify(results, null, 2) + "\n";
const written = [];
const write = (name, text) => {
  writeFileSync(join(resultsDir, name), text);
  const path = join(resultsDir, name);
  written.push(relative(process.cwd(), path).startsWith("..") ? path : relative(process.cwd(), path));
};
write(`run-${burn.n === undefined ? "" : `burn${burn.n}-`}${stamp}.json`, json);
if (save) {
  write("latest.json", json);
  if (results.series.sessionReady) write("session-ready.svg", sessionReadyChart(results));
}
say(
  `wrote ${written.join(", ")}${save ? "" : " (pass --save to also write latest.json, the tracked figures)"}`,
);

const m = results.machine;
const loads = results.load.map((l) => l.one.toFixed(1));
console.log(
  `machine: ${m.cpus} cores (${m.model}), ${m.memoryGiB} GiB, Docker ${m.engine}, Node ${m.node}; BENCH_RUNS=${runs}; ` +
    `${burn.n === undefined ? "no artificial load" : `${burn.n} CPU burner(s)`}, load average ${loads[0]} to ${loads.at(-1)}`,
);
console.log("| figure | drydock median | p10-p90 | baseline | median | p10-p90 | difference |");
console.log("|---|---:|---:|---|---:|---:|---|");
const n = (s) => (s ? s.median.toFixed(1) : "");
const p = (s) => (s ? `${s.p10.toFixed(1)}-${s.p90.toFixed(1)}` : "");
for (const r of results.rows) {
  if (r.error) {
    console.log(`| ${r.group}: not measured (${r.error.replace(/\|/g, "/").slice(0, 120)}) | | | | | | |`);
    continue;
  }
  const unit = r.unit === "ms" ? "" : ` (${r.unit})`;
  const v = r.versus ? verdictText(r.versus) : "";
  console.log(
    `| ${r.group}: ${r.name}${r.name.includes(r.unit) ? "" : unit} | ${n(r.drydock)} | ${p(r.drydock)} | ${r.baselineName ?? ""} | ${n(r.baseline)} | ${p(r.baseline)} | ${v} |`,
  );
}

if (savedRun !== undefined) {
  const entries = compareToSaved(results.rows, savedRun.rows);
  console.log("");
  for (const line of savedFiguresTable(entries, savedRun.date)) console.log(line);
  const worse = entries.filter((e) => e.verdict === "slower" || e.verdict === "higher");
  if (burn.n !== undefined) {
    say(`under ${burn.n} CPU burner(s): the column beside the saved figures is how much each degrades`);
  } else if (worse.length > 0) {
    say(
      `${worse.length} figure(s) moved beyond their spread the wrong way: ${worse.map((e) => e.figure).join("; ")}`,
    );
    if (failOnRegression) process.exitCode = 1;
  }
} else {
  say(`no saved figures at ${savedPath} to compare with; npm run bench -- --save writes them`);
}

/** "lower (p 0.001, sign test, 28 of 30 rounds lower)", or "within noise (…)". */
function verdictText(versus) {
  const p = versus.p < 0.001 ? "p < 0.001" : `p ${versus.p.toFixed(3)}`;
  return `${versus.verdict} (${p}, ${versus.test})`;
}
