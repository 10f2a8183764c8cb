// Benchmarks: figures, not asserts. Run with `npm run bench` after `npm run build` and
// `drydock image build`. Writes bench/results/latest.json and prints a table.
import { execFileSync, spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { cpus, tmpdir, totalmem } from "node:os";
import { join } from "node:path";
import { Engine } from "../dist/engine/engine.js";
import { defaultSandboxImage } from "../dist/sandbox/sandbox-image.js";
import { Session } from "../dist/session/session.js";
import { setLogLevel } from "../dist/util/log.js";

setLogLevel("warning");
const runs = Number(process.env.BENCH_RUNS ?? 50);

function stats(samples) {
  const s = [...samples].sort((a, b) => a - b);
  const at = (q) => s[Math.min(s.length - 1, Math.floor(q * s.length))];
  return { median: at(0.5), p95: at(0.95), n: s.length };
}

function tempRepo(files) {
  const dir = mkdtempSync(join(tmpdir(), "drydock-bench-"));
  execFileSync("git", ["init", "-q"], { cwd: dir });
  for (let i = 0; i < files; i++) writeFileSync(join(dir, `f${i}.txt`), `file ${i}\n`);
  execFileSync("git", ["add", "-A"], { cwd: dir });
  execFileSync("git", ["-c", "user.name=b", "-c", "user.email=b@b", "commit", "-qm", "init"], { cwd: dir });
  return dir;
}

const engine = await Engine.connect();
const image = await defaultSandboxImage(engine);
const repo = tempRepo(10);
const results = { machine: { cpus: cpus().length, model: cpus()[0]?.model, memoryGiB: Math.round(totalmem() / 2 ** 30), engine: (await engine.version()).version }, runs, figures: {} };

// Session ready (box up, repository inside, shell live), cold.
const create = [];
for (let i = 0; i < runs; i++) {
  const t = performance.now();
  const s = await Session.create(engine, { repo, image });
  create.push(performance.now() - t);
  await s.destroy();
}
results.figures["session ready, cold (10-file repo), ms"] = stats(create);

// Baseline: docker run + docker cp of the same tree with the Docker CLI.
const baseline = [];
for (let i = 0; i < runs; i++) {
  const t = performance.now();
  const id = execFileSync("docker", ["run", "-d", "--network", "none", image, "sleep", "infinity"], { encoding: "utf8" }).trim();
  execFileSync("docker", ["cp", `${repo}/.`, `${id}:/workspace/`]);
  baseline.push(performance.now() - t);
  spawnSync("docker", ["rm", "-f", id]);
}
results.figures["docker run + docker cp (CLI baseline), ms"] = stats(baseline);

// Shell round trip for `true` against docker exec per command.
const s = await Session.create(engine, { repo, image });
const rt = [];
for (let i = 0; i < runs; i++) {
  const t = performance.now();
  await s.bash("true");
  rt.push(performance.now() - t);
}
results.figures["shell round trip `true`, ms"] = stats(rt);
const ex = [];
for (let i = 0; i < runs; i++) {
  const t = performance.now();
  execFileSync("docker", ["exec", s.box.id, "true"]);
  ex.push(performance.now() - t);
}
results.figures["docker exec `true` (CLI baseline), ms"] = stats(ex);
const dx = [];
for (let i = 0; i < runs; i++) {
  const t = performance.now();
  await s.box.exec(["true"]);
  dx.push(performance.now() - t);
}
results.figures["dockerode exec `true` (API baseline), ms"] = stats(dx);
await s.destroy();
rmSync(repo, { recursive: true, force: true });

writeFileSync(new URL("./results/latest.json", import.meta.url), JSON.stringify(results, null, 2) + "\n");
console.log(`machine: ${results.machine.cpus} cores (${results.machine.model}), ${results.machine.memoryGiB} GiB, Docker ${results.machine.engine}; ${runs} runs each`);
console.log("| figure | median | p95 |\n|---|---:|---:|");
for (const [name, v] of Object.entries(results.figures)) console.log(`| ${name} | ${v.median.toFixed(1)} | ${v.p95.toFixed(1)} |`);
