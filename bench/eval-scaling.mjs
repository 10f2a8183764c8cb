// How `drydock eval` scales with --concurrency: wall time for 20 tasks at concurrency 1, 2, 4
// and 8 with the patch agent (box start, repository copy, git apply, tests, box removal), and the
// peak memory of the run, sampled every 100 ms: the eval process and every process it started
// (RSS; the `docker exec` clients of the box shells included) plus the eval boxes' memory cgroups
// (their processes, page cache and the in-memory /workspace). Host-wide use (MemTotal -
// MemAvailable) is shown too, but other work on the machine moves it.
// Figures, not asserts. Run after `npm run build` and `drydock image build`:
//
//   node bench/eval-scaling.mjs [--tasks 20] [--levels 1,2,4,8] [--cpu-ms 500] [--json FILE]
//
// Each task's test command burns about --cpu-ms of CPU in the box before running the tests, so
// the run has work that competes for cores, as real test suites do (0 measures the harness alone).
import { execFileSync, spawn } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { cpus, tmpdir, totalmem } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";

const { values } = parseArgs({
  options: {
    tasks: { type: "string", default: "20" },
    levels: { type: "string", default: "1,2,4,8" },
    "cpu-ms": { type: "string", default: "500" },
    json: { type: "string" },
  },
});
const taskCount = Number(values.tasks);
const levels = values.levels.split(",").map(Number);
const cpuMs = Number(values["cpu-ms"]);
const cli = join(import.meta.dirname, "..", "dist", "cli", "main.js");

function git(cwd, ...args) {
  return execFileSync("git", ["-c", "user.name=b", "-c", "user.email=b@b", ...args], { cwd, encoding: "utf8" });
}

function memUsedMiB() {
  const info = readFileSync("/proc/meminfo", "utf8");
  const kb = (key) => Number(new RegExp(`^${key}:\\s+(\\d+)`, "m").exec(info)[1]);
  return (kb("MemTotal") - kb("MemAvailable")) / 1024;
}

/** RSS of a process and all its descendants, from /proc. */
function treeRssMiB(root) {
  const children = new Map();
  const rss = new Map();
  for (const pid of readdirSync("/proc").filter((d) => /^\d+$/.test(d))) {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
      const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
      const kb = Number(/^VmRSS:\s+(\d+)/m.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1] ?? 0);
      rss.set(Number(pid), kb);
      if (!children.has(ppid)) children.set(ppid, []);
      children.get(ppid).push(Number(pid));
    } catch {
      // The process ended while we looked.
    }
  }
  let total = 0;
  const stack = [root];
  while (stack.length) {
    const pid = stack.pop();
    total += rss.get(pid) ?? 0;
    stack.push(...(children.get(pid) ?? []));
  }
  return total / 1024;
}

/** Memory charged to a container's cgroup (v1 or v2 layouts), in MiB. */
function boxMiB(id) {
  for (const file of [
    `/sys/fs/cgroup/memory/docker/${id}/memory.usage_in_bytes`,
    `/sys/fs/cgroup/system.slice/docker-${id}.scope/memory.current`,
    `/sys/fs/cgroup/docker/${id}/memory.current`,
  ]) {
    try {
      return Number(readFileSync(file, "utf8")) / 2 ** 20;
    } catch {
      // Try the next layout.
    }
  }
  return 0;
}

function evalBoxIds() {
  return execFileSync("docker", ["ps", "-q", "--no-trunc", "--filter", "label=drydock.eval.task"], { encoding: "utf8" })
    .split("\n")
    .filter(Boolean);
}

const work = mkdtempSync(join(tmpdir(), "drydock-eval-bench-"));
const repo = join(work, "repo");
execFileSync("mkdir", ["-p", repo]);
git(repo, "init", "-q");
writeFileSync(join(repo, "calc.py"), "def add(a, b):\n    return a - b\n");
writeFileSync(
  join(repo, "test_calc.py"),
  "import unittest\nfrom calc import add\n\n\nclass T(unittest.TestCase):\n    def test_add(self):\n        self.assertEqual(add(2, 3), 5)\n",
);
for (let i = 0; i < 40; i++) writeFileSync(join(repo, `module_${i}.py`), `VALUE_${i} = ${i}\n`.repeat(50));
git(repo, "add", "-A");
git(repo, "commit", "-qm", "init");
writeFileSync(join(repo, "calc.py"), "def add(a, b):\n    return a + b\n");
const gold = git(repo, "diff");
git(repo, "checkout", "-q", "calc.py");

const burn = cpuMs > 0 ? `python3 -c "import time; e = time.process_time() + ${cpuMs / 1000}\nwhile time.process_time() < e: pass" && ` : "";
const tasks = Array.from({ length: taskCount }, (_, i) => ({
  id: `t${String(i).padStart(2, "0")}`,
  repo,
  prompt: "fix add",
  test_cmd: `${burn}python3 -m unittest -q`,
  patch: gold,
}));
const taskFile = join(work, "tasks.jsonl");
writeFileSync(taskFile, tasks.map((t) => JSON.stringify(t)).join("\n") + "\n");

async function runAt(concurrency) {
  const out = join(work, `out-${concurrency}`);
  const baseline = memUsedMiB();
  let peak = baseline;
  let peakRun = 0;
  let boxes = [];
  let child;
  const lister = setInterval(() => (boxes = evalBoxIds()), 1000);
  const sampler = setInterval(() => {
    peak = Math.max(peak, memUsedMiB());
    if (child?.pid) peakRun = Math.max(peakRun, treeRssMiB(child.pid) + boxes.reduce((sum, id) => sum + boxMiB(id), 0));
  }, 100);
  const started = performance.now();
  const code = await new Promise((resolve) => {
    child = spawn(process.execPath, [cli, "eval", taskFile, "--agent", "patch", "--concurrency", String(concurrency), "--out", out, "--force"], {
      stdio: ["ignore", "ignore", "pipe"],
    });
    let stderr = "";
    child.stderr.on("data", (d) => (stderr += d));
    child.on("close", (c) => {
      if (c !== 0) process.stderr.write(stderr);
      resolve(c);
    });
  });
  const wallMs = performance.now() - started;
  clearInterval(sampler);
  clearInterval(lister);
  const results = JSON.parse(readFileSync(join(out, "results.json"), "utf8"));
  const phases = { start: 0, setup: 0, agent: 0, tests: 0 };
  for (const t of results.tasks) for (const a of t.attempts) for (const k of Object.keys(phases)) phases[k] += a.timings_ms[k];
  const n = results.summary.attempts_finished;
  return {
    concurrency,
    exit_code: code,
    wall_s: +(wallMs / 1000).toFixed(2),
    resolved: `${results.summary.resolved}/${results.summary.tasks}`,
    per_task_s: +(results.summary.duration_ms / n / 1000).toFixed(2),
    mean_phase_ms: Object.fromEntries(Object.entries(phases).map(([k, v]) => [k, Math.round(v / n)])),
    peak_run_mib: Math.round(peakRun),
    peak_host_mib: Math.round(peak),
    peak_host_over_idle_mib: Math.round(peak - baseline),
  };
}

const figures = [];
try {
  for (const level of levels) {
    const r = await runAt(level);
    figures.push(r);
    process.stderr.write(`concurrency ${level}: ${r.wall_s} s, peak ${r.peak_run_mib} MiB\n`);
  }
} finally {
  rmSync(work, { recursive: true, force: true });
}
const base = figures[0].wall_s;
console.log(`\n${taskCount} tasks, patch agent, ~${cpuMs} ms of CPU per test run; ${cpus().length} cores (${cpus()[0]?.model}), ${Math.round(totalmem() / 2 ** 30)} GiB\n`);
console.log("| concurrency | wall s | speed-up | s per task (in box) | start / setup / agent / tests ms | peak MiB (eval + boxes) | peak host MiB (over idle) |");
console.log("|---:|---:|---:|---:|---|---:|---:|");
for (const f of figures) {
  const p = f.mean_phase_ms;
  console.log(`| ${f.concurrency} | ${f.wall_s} | ${(base / f.wall_s).toFixed(2)}× | ${f.per_task_s} | ${p.start} / ${p.setup} / ${p.agent} / ${p.tests} | ${f.peak_run_mib} | ${f.peak_host_mib} (+${f.peak_host_over_idle_mib}) |`);
}
if (values.json) writeFileSync(values.json, JSON.stringify({ machine: { cpus: cpus().length, memoryGiB: Math.round(totalmem() / 2 ** 30) }, taskCount, cpuMs, figures }, null, 2) + "\n");
