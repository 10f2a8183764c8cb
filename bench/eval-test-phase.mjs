// What grading costs beside the tests themselves: for each attempt, the test phase
// (result.json's timings_ms.tests: the fresh box, setup, the agent's diff and the test patch,
// drydock's count of the tests without the diff, the graded run) over the graded test_cmd's own
// run (tests.duration_ms), and tasks per minute, on the SWE-bench-style fixtures
// (test/fixtures/swebench: six graded by pytest, more-itertools by unittest) given as rows and
// graded from gold predictions. Modes run interleaved (a, b, c, then c, b, a, ...) so noise on the
// machine falls on all alike; each run is a fresh --out. Figures, not asserts. After `npm run build`:
//
//   node bench/eval-test-phase.mjs [--copies 2] [--rounds 3] [--concurrency 2]
//       [--modes fresh,cached,agent] [--baseline PATH/TO/dist/cli/main.js] [--agent-sleep S] [--json FILE]
//
// The agent is the `patch` agent (it applies the gold prediction at once), or with --agent-sleep a
// command agent that first waits S seconds, as an agent waits on its model (lib/sleep-patch-agent.mjs):
// with a patch agent nothing runs beside the agent for long, so drydock's count, started beside it
// (src/eval/beside-agent.ts), is mostly waited for; with an agent that takes longer than the suite it
// is ready when grading starts.
//
// Modes:
// - fresh: `drydock eval` as it runs by default, with an empty state directory: the count of the
//   tests without the diff is taken once per task base in the run (the copies of a row share one);
// - cached: the same with the state directory of an earlier run: every count is reused;
// - agent: --grade-in-agent-box (no fresh box, no count), the floor of what grading costs;
// - baseline: `fresh` with another build's CLI (--baseline), e.g. the release before the count
//   existed, for tasks per minute against it in the same interleaved run.
import { execFileSync, spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { cpus, tmpdir, totalmem } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { stats } from "./lib/stats.mjs";
import { prepareSwebenchFixture } from "./lib/swebench-fixture.mjs";

const { values } = parseArgs({
  options: {
    copies: { type: "string", default: "2" },
    rounds: { type: "string", default: "3" },
    concurrency: { type: "string", default: "2" },
    modes: { type: "string", default: "fresh,cached,agent" },
    baseline: { type: "string" },
    "agent-sleep": { type: "string", default: "0" },
    json: { type: "string" },
  },
});
const copies = Number(values.copies);
const rounds = Number(values.rounds);
const concurrency = Number(values.concurrency);
const agentSleep = Number(values["agent-sleep"]);
const modes = values.modes.split(",");
if (values.baseline) modes.push("baseline");
for (const m of modes) {
  if (!["fresh", "cached", "agent", "baseline"].includes(m)) throw new Error(`--modes: ${m} is not a mode`);
}
const root = join(import.meta.dirname, "..");
const cli = join(root, "dist", "cli", "main.js");

const work = mkdtempSync(join(tmpdir(), "drydock-bench-test-phase-"));
const say = (text) => process.stderr.write(`[bench] ${text}\n`);
try {
  const tasks = prepareSwebenchFixture(work, copies);
  // The state directory `cached` runs share (its counts kept by the warm-up run).
  const kept = join(work, "state-kept");

  let runs = 0;
  const runOnce = (mode, round) =>
    new Promise((resolve, reject) => {
      const out = join(work, `out-${mode}-${round}`);
      const state = mode === "cached" ? kept : join(work, `state-${runs++}`);
      const program = mode === "baseline" ? values.baseline : cli;
      const agent =
        agentSleep > 0
          ? [
              "--agent",
              "command",
              "--agent-command",
              `node ${join(import.meta.dirname, "lib", "sleep-patch-agent.mjs")} ${join(work, "preds.jsonl")} ${agentSleep}`,
            ]
          : ["--agent", "patch", "--patches", "preds.jsonl"];
      const started = performance.now();
      const child = spawn(
        process.execPath,
        [
          program,
          "eval",
          "rows.jsonl",
          "--repos",
          "clones",
          ...agent,
          "--concurrency",
          String(concurrency),
          "--out",
          out,
          ...(mode === "agent" ? ["--grade-in-agent-box"] : []),
        ],
        { cwd: work, env: { ...process.env, DRYDOCK_STATE_DIR: state }, stdio: ["ignore", "ignore", "pipe"] },
      );
      let stderr = "";
      child.stderr.on("data", (d) => (stderr += d));
      child.on("close", (code) => {
        const wallMs = performance.now() - started;
        if (code !== 0) return reject(new Error(`${mode}: eval exited ${code}: ${stderr.slice(-2000)}`));
        const results = JSON.parse(readFileSync(join(out, "results.json"), "utf8"));
        if (results.summary.resolved !== tasks) {
          return reject(
            new Error(`${mode}: only ${results.summary.resolved}/${tasks} resolved: ${stderr.slice(-2000)}`),
          );
        }
        const attempts = results.tasks.flatMap((t) => t.attempts);
        const phase = attempts.map((a) => a.timings_ms.tests);
        // An older build records no suite time: its ratio is not known.
        const suite = attempts.map((a) => a.tests?.duration_ms).filter((ms) => ms !== undefined);
        const ratio =
          suite.length === attempts.length
            ? attempts.map((a) => a.timings_ms.tests / a.tests.duration_ms)
            : [];
        rmSync(out, { recursive: true, force: true });
        resolve({ wallMs, phase, suite, ratio });
      });
    });

  say(
    `${tasks} tasks at --concurrency ${concurrency}, modes ${modes.join(", ")}, ${rounds} round(s), interleaved`,
  );
  // Warm-up: builds the environment images, and keeps the counts the `cached` runs reuse.
  const warm = await runOnce("fresh", "warmup");
  execFileSync("cp", ["-r", join(work, `state-${runs - 1}`), kept]);
  say(`warm-up: ${(warm.wallMs / 1000).toFixed(1)} s`);
  if (values.baseline) {
    // The other build may build its own sandbox image first.
    const warmBaseline = await runOnce("baseline", "warmup");
    say(`baseline warm-up: ${(warmBaseline.wallMs / 1000).toFixed(1)} s`);
  }
  const samples = Object.fromEntries(modes.map((m) => [m, { wall: [], phase: [], suite: [], ratio: [] }]));
  for (let r = 0; r < rounds; r++) {
    const order = r % 2 === 0 ? modes : [...modes].reverse();
    for (const mode of order) {
      const got = await runOnce(mode, r);
      const s = samples[mode];
      s.wall.push(got.wallMs);
      s.phase.push(...got.phase);
      s.suite.push(...got.suite);
      s.ratio.push(...got.ratio);
      say(`round ${r + 1} ${mode}: ${(got.wallMs / 1000).toFixed(1)} s`);
    }
  }
  const perMinute = (ms) => (tasks / (ms / 1000)) * 60;
  const rowsOut = modes.map((mode) => {
    const s = samples[mode];
    const wall = stats(s.wall);
    const phase = stats(s.phase);
    const suite = s.suite.length ? stats(s.suite) : undefined;
    const ratio = s.ratio.length ? stats(s.ratio) : undefined;
    return {
      mode,
      tasks: tasks,
      tasks_per_minute: {
        median: perMinute(wall.median),
        min: perMinute(wall.max),
        max: perMinute(wall.min),
      },
      test_phase_s: { median: phase.median / 1000, p10: phase.p10 / 1000, p90: phase.p90 / 1000 },
      ...(suite
        ? { suite_s: { median: suite.median / 1000, p10: suite.p10 / 1000, p90: suite.p90 / 1000 } }
        : {}),
      ...(ratio ? { test_phase_over_suite: { median: ratio.median, p10: ratio.p10, p90: ratio.p90 } } : {}),
    };
  });
  const report = {
    date: new Date().toISOString(),
    machine: { cpus: cpus().length, model: cpus()[0]?.model, memoryGiB: Math.round(totalmem() / 2 ** 30) },
    concurrency,
    rounds,
    agent_sleep_s: agentSleep,
    rows: rowsOut,
  };
  const range = (x, digits = 2) =>
    x ? `${x.median.toFixed(digits)} (${x.p10.toFixed(digits)}–${x.p90.toFixed(digits)})` : "—";
  console.log(
    "| mode | tasks/min median (min–max) | test phase s median (p10–p90) | suite s median (p10–p90) | test phase / suite median (p10–p90) |",
  );
  console.log("|---|---:|---:|---:|---:|");
  for (const r of rowsOut) {
    console.log(
      `| ${r.mode} | ${r.tasks_per_minute.median.toFixed(1)} (${r.tasks_per_minute.min.toFixed(1)}–${r.tasks_per_minute.max.toFixed(1)}) | ` +
        `${range(r.test_phase_s)} | ${range(r.suite_s)} | ${range(r.test_phase_over_suite, 1)} |`,
    );
  }
  if (values.json) writeFileSync(values.json, JSON.stringify(report, null, 2) + "\n");
} finally {
  rmSync(work, { recursive: true, force: true });
}
