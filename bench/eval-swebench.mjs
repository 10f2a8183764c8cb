// Tasks per minute of `drydock eval` on SWE-bench-style tasks built from real bug fixes
// (test/fixtures/swebench: six graded by pytest, more-itertools graded by unittest), given as
// SWE-bench rows and graded from a predictions file (gold patches), at --concurrency 1, 2 and 4.
// The levels run interleaved (1, 2, 4, then 4, 2, 1, ...) so noise on the machine falls on all
// alike; each run is a fresh --out (nothing resumed). Figures, not asserts. After `npm run build`:
//
//   node bench/eval-swebench.mjs [--copies 4] [--rounds 3] [--levels 1,2,4] [--grading fresh,agent] [--json FILE]
//
// --grading: where the tests run, each level once per grading, all interleaved: "fresh" (a fresh
// box per attempt, the default of `drydock eval`) and "agent" (--grade-in-agent-box).
// --copies N puts N copies of each fixture row in the task file (2N tasks). The reference figure
// is SWE-bench's own harness, docs/reference/harness.md ("Performance Benchmarks"): SWE-bench Lite
// (300 instances) takes ~15 minutes with prebuilt instance images (cache level = instance) on an
// 8-core machine with max_workers=6: 20 instances a minute, ~18 s of one worker per instance.
// Its instances run far larger test suites than these fixtures; see docs/eval.md.
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { cpus, tmpdir, totalmem } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { stats } from "./lib/stats.mjs";
import { prepareSwebenchFixture } from "./lib/swebench-fixture.mjs";

const { values } = parseArgs({
  options: {
    copies: { type: "string", default: "4" },
    rounds: { type: "string", default: "3" },
    levels: { type: "string", default: "1,2,4" },
    grading: { type: "string", default: "fresh,agent" },
    json: { type: "string" },
  },
});
const copies = Number(values.copies);
const rounds = Number(values.rounds);
const levels = values.levels.split(",").map(Number);
const gradings = values.grading.split(",");
for (const g of gradings)
  if (g !== "fresh" && g !== "agent") throw new Error(`--grading: ${g} is not fresh or agent`);
/** Every level under every grading, in the order one round runs them. */
const configs = levels.flatMap((level) =>
  gradings.map((grading) => ({ level, grading, key: `${level}/${grading}` })),
);
const root = join(import.meta.dirname, "..");
const cli = join(root, "dist", "cli", "main.js");
const SWEBENCH_REFERENCE = {
  source:
    "SWE-bench docs/reference/harness.md, Performance Benchmarks (SWE-bench Lite, cache level = instance)",
  instances: 300,
  minutes: 15,
  workers: 6,
  cores: 8,
  tasks_per_minute: 300 / 15,
  worker_seconds_per_task: (15 * 60 * 6) / 300,
};

const work = mkdtempSync(join(tmpdir(), "drydock-bench-swebench-"));
const say = (text) => process.stderr.write(`[bench] ${text}\n`);
try {
  const tasks = prepareSwebenchFixture(work, copies);

  const runOnce = ({ level, grading }, round) =>
    new Promise((resolve, reject) => {
      const out = join(work, `out-${level}-${grading}-${round}`);
      const started = performance.now();
      const child = spawn(
        process.execPath,
        [
          cli,
          "eval",
          "rows.jsonl",
          "--repos",
          "clones",
          "--agent",
          "patch",
          "--patches",
          "preds.jsonl",
          "--concurrency",
          String(level),
          "--out",
          out,
          ...(grading === "agent" ? ["--grade-in-agent-box"] : []),
        ],
        {
          cwd: work,
          env: { ...process.env, DRYDOCK_STATE_DIR: join(work, "state") },
          stdio: ["ignore", "ignore", "pipe"],
        },
      );
      let stderr = "";
      child.stderr.on("data", (d) => (stderr += d));
      child.on("close", (code) => {
        const wallMs = performance.now() - started;
        if (code !== 0) return reject(new Error(`eval exited ${code}: ${stderr.slice(-2000)}`));
        const results = JSON.parse(readFileSync(join(out, "results.json"), "utf8"));
        if (results.summary.resolved !== tasks) {
          return reject(
            new Error(`only ${results.summary.resolved}/${tasks} resolved: ${stderr.slice(-2000)}`),
          );
        }
        const perTask = results.tasks.map((t) => t.duration_ms);
        rmSync(out, { recursive: true, force: true });
        resolve({ wallMs, perTask });
      });
    });

  say(
    `${tasks} tasks, ${configs.map((c) => c.key).join(", ")} (concurrency/grading), ${rounds} round(s), interleaved`,
  );
  await runOnce(configs[0], "warmup");
  const walls = Object.fromEntries(configs.map((c) => [c.key, []]));
  const perTask = Object.fromEntries(configs.map((c) => [c.key, []]));
  for (let r = 0; r < rounds; r++) {
    const order = r % 2 === 0 ? configs : [...configs].reverse();
    for (const config of order) {
      const { wallMs, perTask: each } = await runOnce(config, r);
      walls[config.key].push(wallMs);
      perTask[config.key].push(...each);
      say(
        `round ${r + 1} concurrency ${config.level}, ${config.grading} box: ${(wallMs / 1000).toFixed(1)} s`,
      );
    }
  }
  const rowsOut = configs.map(({ level, grading, key }) => {
    const wall = stats(walls[key]);
    const task = stats(perTask[key]);
    const perMinute = (ms) => (tasks / (ms / 1000)) * 60;
    return {
      concurrency: level,
      graded_in: grading === "agent" ? "agent box" : "fresh box",
      tasks: tasks,
      wall_s: { median: wall.median / 1000, min: wall.min / 1000, max: wall.max / 1000 },
      tasks_per_minute: {
        median: perMinute(wall.median),
        min: perMinute(wall.max),
        max: perMinute(wall.min),
      },
      seconds_per_task: { median: task.median / 1000, p10: task.p10 / 1000, p90: task.p90 / 1000 },
    };
  });
  const report = {
    date: new Date().toISOString(),
    machine: { cpus: cpus().length, model: cpus()[0]?.model, memoryGiB: Math.round(totalmem() / 2 ** 30) },
    rounds,
    rows: rowsOut,
    reference: SWEBENCH_REFERENCE,
  };
  console.log(
    "| concurrency | tests run in | tasks/min median (min–max) | wall s median (min–max) | s per task median (p10–p90) |",
  );
  console.log("|---:|---|---:|---:|---:|");
  for (const r of rowsOut) {
    console.log(
      `| ${r.concurrency} | ${r.graded_in} | ${r.tasks_per_minute.median.toFixed(1)} (${r.tasks_per_minute.min.toFixed(1)}–${r.tasks_per_minute.max.toFixed(1)}) | ` +
        `${r.wall_s.median.toFixed(1)} (${r.wall_s.min.toFixed(1)}–${r.wall_s.max.toFixed(1)}) | ` +
        `${r.seconds_per_task.median.toFixed(2)} (${r.seconds_per_task.p10.toFixed(2)}–${r.seconds_per_task.p90.toFixed(2)}) |`,
    );
  }
  console.log(
    `| SWE-bench harness, ${SWEBENCH_REFERENCE.cores} cores, ${SWEBENCH_REFERENCE.workers} workers | a fresh container | ${SWEBENCH_REFERENCE.tasks_per_minute.toFixed(1)} | — | ${SWEBENCH_REFERENCE.worker_seconds_per_task.toFixed(1)} (one worker's time) |`,
  );
  if (values.json) writeFileSync(values.json, JSON.stringify(report, null, 2) + "\n");
} finally {
  rmSync(work, { recursive: true, force: true });
}
