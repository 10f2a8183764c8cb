// What a drydock command costs before it does anything: `drydock --help`, and `drydock eval` and
// `drydock serve` refusing a bad flag (they exit before any engine is asked), beside Node.js
// starting and doing nothing, the floor under every command. One interleaved loop, so load on the
// machine falls on all alike. BENCH_BASELINE_DIST=DIR also runs the same three commands from
// another build's dist/ (a checkout of another commit, built), as a fourth to seventh row.
//
//   npm run build && node bench/cli-start.mjs        (BENCH_RUNS=N rounds, default 20)
//
// Writes bench/results/cli-start-<time>.json (git ignores it), or BENCH_RESULTS_DIR.
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { benchResults, spread } from "./lib/results.mjs";
import { compare, interleaved } from "./lib/stats.mjs";

const runs = Number(process.env.BENCH_RUNS ?? 20);
const say = (text) => process.stderr.write(`[bench] ${text}\n`);
const here = new URL("../dist/", import.meta.url).pathname;
const baseline = process.env.BENCH_BASELINE_DIST;

/** A run of `node args`, which must exit with `code`; its time is the whole process's. */
function node(args, code) {
  return {
    run: () => {
      const r = spawnSync(process.execPath, args, { stdio: ["ignore", "ignore", "pipe"], encoding: "utf8" });
      if (r.status !== code) throw new Error(`node ${args.join(" ")} exited ${r.status}: ${r.stderr}`);
    },
  };
}

const commands = (dist) => ({
  help: node([join(dist, "cli", "main.js"), "--help"], 0),
  eval: node([join(dist, "cli", "main.js"), "eval", "tasks.jsonl", "--concurrency", "0"], 2),
  serve: node([join(dist, "cli", "main.js"), "serve", "--port", "-1"], 2),
});
const alternatives = {
  floor: node(["-e", ""], 0),
  ...commands(here),
  ...(baseline
    ? Object.fromEntries(Object.entries(commands(baseline)).map(([name, alt]) => [`baseline ${name}`, alt]))
    : {}),
};

const { results, noteLoad, write } = benchResults("cli-start", { runs, baseline }, say);
noteLoad("start");
const r = await interleaved(runs, alternatives);
const label = {
  help: "drydock --help",
  eval: "drydock eval refusing --concurrency 0",
  serve: "drydock serve refusing --port -1",
};
for (const name of ["help", "eval", "serve"]) {
  const versus = compare(r[name], r.floor);
  results.rows.push({ name: label[name], drydock: r[name], floor: r.floor, versus });
  say(`${label[name]} | ${spread(r[name])} | node -e '' ${spread(r.floor)} | ${versus.verdict}`);
  if (baseline) {
    const before = r[`baseline ${name}`];
    const change = compare(r[name], before);
    results.rows.push({ name: `${label[name]}, against ${baseline}`, drydock: r[name], baseline: before, versus: change });
    say(`${label[name]} | ${spread(r[name])} | ${baseline} ${spread(before)} | ${change.verdict}`);
  }
}
write();
