// Tasks per minute of `drydock eval` on one Docker engine and on three (`--engine`, repeated):
// the host's engine, plus two engines this script starts in network namespaces of their own,
// reached over verified TLS (test/helpers/tls-engines.mjs, as the engines fault test does). All
// three run on THIS machine, so they share its cores and disk: the figure shows what placement
// and the TLS hop cost and how attempts spread, not what three machines would give. The sandbox
// image is sent to the two engines first (timed apart: the first attempt on a new engine waits
// for it once). Patch agent; each task's test command burns about --cpu-ms of CPU in the box.
// Figures, not asserts. Needs root (netns), after `npm run build` and `drydock image build`:
//
//   node bench/eval-engines.mjs [--tasks 18] [--per-engine 2] [--cpu-ms 500] [--json FILE]
import { execFileSync, spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { cpus, tmpdir, totalmem } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { TlsEngines } from "../test/helpers/tls-engines.mjs";

const { values } = parseArgs({
  options: {
    tasks: { type: "string", default: "18" },
    "per-engine": { type: "string", default: "2" },
    "cpu-ms": { type: "string", default: "500" },
    json: { type: "string" },
  },
});
const taskCount = Number(values.tasks);
const perEngine = Number(values["per-engine"]);
const cpuMs = Number(values["cpu-ms"]);
const cli = join(import.meta.dirname, "..", "dist", "cli", "main.js");
const home = process.env.DOCKER_HOST ?? "unix:///var/run/docker.sock";

function git(cwd, ...args) {
  return execFileSync("git", ["-c", "user.name=b", "-c", "user.email=b@b", ...args], { cwd, encoding: "utf8" });
}

const image = execFileSync(process.execPath, [cli, "image", "build"], { encoding: "utf8", stdio: ["ignore", "pipe", "inherit"] })
  .trim()
  .split("\n")
  .at(-1);
const work = mkdtempSync(join(tmpdir(), "drydock-engines-bench-"));
const repo = join(work, "repo");
execFileSync("mkdir", ["-p", repo]);
git(repo, "init", "-q");
writeFileSync(join(repo, "calc.py"), "def add(a, b):\n    return a - b\n");
writeFileSync(
  join(repo, "test_calc.py"),
  "import unittest\nfrom calc import add\n\n\nclass T(unittest.TestCase):\n    def test_add(self):\n        self.assertEqual(add(2, 3), 5)\n",
);
git(repo, "add", "-A");
git(repo, "commit", "-qm", "init");
writeFileSync(join(repo, "calc.py"), "def add(a, b):\n    return a + b\n");
const gold = git(repo, "diff");
git(repo, "checkout", "-q", "calc.py");
const burn = cpuMs > 0 ? `python3 -c "import time; e = time.process_time() + ${cpuMs / 1000}\nwhile time.process_time() < e: pass" && ` : "";
const taskFile = join(work, "tasks.jsonl");
writeFileSync(
  taskFile,
  Array.from({ length: taskCount }, (_, i) =>
    JSON.stringify({ id: `t${String(i).padStart(2, "0")}`, repo, prompt: "fix add", test_cmd: `${burn}python3 -m unittest -q`, patch: gold }),
  ).join("\n") + "\n",
);

async function run(name, engineArgs, concurrency) {
  const out = join(work, `out-${name}`);
  const started = performance.now();
  const code = await new Promise((resolve) => {
    const child = spawn(
      process.execPath,
      [cli, "eval", taskFile, "--agent", "patch", "--no-env", "--image", image, "--memory-mb", "512", "--concurrency", String(concurrency), "--out", out, ...engineArgs],
      { stdio: ["ignore", "ignore", "pipe"] },
    );
    let stderr = "";
    child.stderr.on("data", (d) => (stderr += d));
    child.on("close", (c) => {
      if (c !== 0) process.stderr.write(stderr);
      resolve(c);
    });
  });
  const wallS = (performance.now() - started) / 1000;
  const results = JSON.parse(readFileSync(join(out, "results.json"), "utf8"));
  const placement = {};
  for (const t of results.tasks) for (const a of t.attempts) placement[a.engine ?? home] = (placement[a.engine ?? home] ?? 0) + 1;
  return {
    name,
    exit_code: code,
    concurrency,
    wall_s: +wallS.toFixed(1),
    tasks_per_min: +((results.summary.attempts_finished / wallS) * 60).toFixed(1),
    resolved: `${results.summary.resolved}/${results.summary.tasks}`,
    placement,
  };
}

const figures = [];
let sendS = [];
const engines = await TlsEngines.start(2);
try {
  const client = engines.clientTlsDir;
  sendS = await Promise.all(
    engines.engines.map(async (e) => {
      const t = performance.now();
      await new Promise((resolve, reject) => {
        const copy = spawn("sh", ["-c", 'docker save "$1" | DOCKER_HOST="$2" DOCKER_TLS_VERIFY=1 DOCKER_CERT_PATH="$3" docker load -q', "sh", image, e.url, client], {
          stdio: "ignore",
        });
        copy.on("close", (c) => (c === 0 ? resolve() : reject(new Error(`docker load to ${e.url} exited ${c}`))));
      });
      return +((performance.now() - t) / 1000).toFixed(1);
    }),
  );
  process.stderr.write(`image sent to both engines at once: ${sendS.join(" s, ")} s\n`);
  figures.push(await run("one engine", ["--engine", home], perEngine));
  process.stderr.write(`one engine: ${figures[0].tasks_per_min} tasks/min\n`);
  figures.push(
    await run("three engines", ["--engine", home, ...engines.engines.flatMap((e) => ["--engine", e.url]), "--engine-tls-dir", client], 3 * perEngine),
  );
  process.stderr.write(`three engines: ${figures[1].tasks_per_min} tasks/min\n`);
} finally {
  await engines[Symbol.asyncDispose]();
  rmSync(work, { recursive: true, force: true });
}
console.log(
  `\n${taskCount} tasks, patch agent, ~${cpuMs} ms of CPU per test run, ${perEngine} boxes per engine; ${cpus().length} cores (${cpus()[0]?.model}), ${Math.round(totalmem() / 2 ** 30)} GiB.`,
);
console.log("All engines run on this one machine and share its cores: three engines cannot be three times faster here.");
console.log(`Sending the ${image} image (docker save | docker load over TLS) took ${sendS.join(" s and ")} s (both at once).\n`);
console.log("| engines | concurrency | wall s | tasks/min | resolved | attempts per engine |");
console.log("|---|---:|---:|---:|---|---|");
for (const f of figures) {
  const placed = Object.entries(f.placement)
    .map(([k, v]) => `${k}: ${v}`)
    .join(", ");
  console.log(`| ${f.name} | ${f.concurrency} | ${f.wall_s} | ${f.tasks_per_min} | ${f.resolved} | ${placed} |`);
}
if (values.json) writeFileSync(values.json, JSON.stringify({ machine: { cpus: cpus().length, memoryGiB: Math.round(totalmem() / 2 ** 30) }, taskCount, cpuMs, perEngine, image_send_s: sendS, figures }, null, 2) + "\n");
