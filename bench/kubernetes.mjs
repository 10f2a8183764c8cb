// drydock on the test cluster (scripts/kube/cluster.sh up) beside drydock on Docker, same machine,
// interleaved: a cold session ready (10 files), a warm one (a box from a pool prefilled with the
// repository, as `serve` keeps), a bash `true` round trip, and eval of the SWE-bench
// fixtures (8 tasks, patch agent, 4 at a time, 0.5 CPU each) as tasks per minute, the cluster's
// attempts placed on its two nodes by the scheduler. Needs `npm run build` and a cluster that is up.
//
//   node bench/kubernetes.mjs          BENCH_RUNS=N (default 20; eval runs 2 rounds; BENCH_EVAL=0 leaves it out)
// Writes bench/results/kubernetes-<time>.json (untracked) and prints the table.
import { execFileSync, spawnSync } from "node:child_process";
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { cpus, loadavg, tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { fromPool } from "./lib/pool-alternative.mjs";
import { makeRepo } from "./lib/repos.mjs";
import { compare, interleaved } from "./lib/stats.mjs";

const root = resolve(import.meta.dirname, "..");
const tmp = mkdtempSync(join(tmpdir(), "drydock-bench-kube-"));
process.env.DRYDOCK_STATE_DIR = join(tmp, "state");
const runs = Number(process.env.BENCH_RUNS ?? 20);
const say = (text) => process.stderr.write(`[bench] ${text}\n`);

const { Engine } = await import("../dist/engine/engine.js");
const { KubernetesEngine } = await import("../dist/engine/kubernetes/kubernetes-engine.js");
const { parseKubernetesTarget } = await import("../dist/engine/kubernetes/kubernetes-target.js");
const { Session } = await import("../dist/session/session.js");
const { SessionManager } = await import("../dist/session/session-manager.js");
const { defaultSandboxImage } = await import("../dist/sandbox/sandbox-image.js");
const { setLogLevel } = await import("../dist/util/log.js");
setLogLevel("warning");

const kubeconfig = /^(?:export )?KUBECONFIG=(.*)$/m.exec(
  execFileSync("bash", [join(root, "scripts/kube/cluster.sh"), "env"], { encoding: "utf8" }),
)[1];
const kubectl = (...args) =>
  execFileSync(
    join("/var/cache/drydock/kubernetes/v1.37.2/bin/kubectl"),
    ["--kubeconfig", kubeconfig, ...args],
    {
      encoding: "utf8",
    },
  );
const namespace = `drydock-bench-${process.pid}`;
kubectl("create", "namespace", namespace);
const target = `kubernetes:${namespace}?kubeconfig=${encodeURIComponent(kubeconfig)}&apparmor=off`;

const docker = await Engine.connect();
const image = process.env.DRYDOCK_IMAGE ?? (await defaultSandboxImage(docker));
execFileSync("bash", [join(root, "scripts/kube/cluster.sh"), "load", image], { stdio: "ignore" });
const t = parseKubernetesTarget(target);
const cluster = await KubernetesEngine.connect(t, { appArmor: false });
const repo = makeRepo(tmp, 10);
const rows = [];
const row = (what, a, b) => {
  rows.push({ what, kubernetes: a, docker: b, ...compare(a, b) });
  const f = (s) => `${s.median.toFixed(1)} ms (p10 ${s.p10.toFixed(1)}, p90 ${s.p90.toFixed(1)})`;
  say(`${what}: kubernetes ${f(a)} | docker ${f(b)}`);
};

try {
  say(`load ${loadavg()[0].toFixed(1)}: session ready, ${runs} rounds`);
  const ready = await interleaved(runs, {
    kubernetes: { run: () => Session.create(cluster, { repo, image }), after: (s) => s.destroy() },
    docker: { run: () => Session.create(docker, { repo, image }), after: (s) => s.destroy() },
  });
  row("cold session ready, 10 files", ready.kubernetes, ready.docker);

  say(`load ${loadavg()[0].toFixed(1)}: warm session ready (prefilled pool), ${runs} rounds`);
  const pools = {
    kubernetes: await SessionManager.start(cluster, {
      pool: { size: 1, profile: { image }, prefillRepo: repo },
    }),
    docker: await SessionManager.start(docker, { pool: { size: 1, profile: { image }, prefillRepo: repo } }),
  };
  let notWarm = 0;
  try {
    const warm = await interleaved(runs, {
      kubernetes: fromPool(pools.kubernetes, { repo, image }, () => notWarm++),
      docker: fromPool(pools.docker, { repo, image }, () => notWarm++),
    });
    if (notWarm) say(`${notWarm} "warm" sessions did not get a pooled box`);
    row("warm session ready, 10 files (prefilled pool)", warm.kubernetes, warm.docker);
  } finally {
    await Promise.allSettled([pools.kubernetes.closeAll(), pools.docker.closeAll()]);
  }

  say(`load ${loadavg()[0].toFixed(1)}: bash round trip`);
  const [onCluster, onDocker] = await Promise.all([
    Session.create(cluster, { repo, image }),
    Session.create(docker, { repo, image }),
  ]);
  try {
    const rtt = await interleaved(
      runs * 5,
      {
        kubernetes: { run: () => onCluster.bash("true") },
        docker: { run: () => onDocker.bash("true") },
      },
      { warmup: 3 },
    );
    row("bash `true` round trip", rtt.kubernetes, rtt.docker);
  } finally {
    await Promise.allSettled([onCluster.destroy(), onDocker.destroy()]);
  }

  say(`load ${loadavg()[0].toFixed(1)}: eval of the fixtures, 2 rounds`);
  const fixtures = join(root, "test/fixtures/swebench");
  const evalOnce = (engineArgs, name) => {
    const work = mkdtempSync(join(tmp, `eval-${name}-`));
    mkdirSync(join(work, "clones"));
    execFileSync("git", ["clone", "-q", join(fixtures, "six.bundle"), join(work, "clones/benjaminp__six")]);
    execFileSync("git", [
      "clone",
      "-q",
      join(fixtures, "more-itertools.bundle"),
      join(work, "clones/more-itertools__more-itertools"),
    ]);
    copyFileSync(join(fixtures, "tasks.jsonl"), join(work, "tasks.jsonl"));
    const started = performance.now();
    const run = spawnSync(
      process.execPath,
      [
        join(root, "dist/cli/main.js"),
        "eval",
        "tasks.jsonl",
        "--agent",
        "patch",
        "--image",
        image,
        "--concurrency",
        "4",
        "--cpus",
        "0.5",
        "--out",
        "out",
        ...engineArgs,
      ],
      { cwd: work, encoding: "utf8" },
    );
    const ms = performance.now() - started;
    if (run.status !== 0) throw new Error(`eval on ${name} failed: ${run.stderr.slice(-2000)}`);
    const nodes = new Set();
    const results = JSON.parse(readFileSync(join(work, "out/results.json"), "utf8"));
    for (const task of results.tasks) {
      const r = JSON.parse(readFileSync(join(work, "out/tasks", task.id, "result.json"), "utf8"));
      if (r.node) nodes.add(r.node);
    }
    rmSync(work, { recursive: true, force: true });
    return { ms, tasks: results.tasks.length, nodes: [...nodes].sort() };
  };
  const evalRounds = { kubernetes: [], docker: [] };
  for (let i = 0; i < (process.env.BENCH_EVAL === "0" ? 0 : 2); i++) {
    for (const name of i % 2 === 0 ? ["kubernetes", "docker"] : ["docker", "kubernetes"]) {
      evalRounds[name].push(evalOnce(name === "kubernetes" ? ["--engine", target] : [], name));
    }
  }
  for (const [name, list] of Object.entries(evalRounds)) {
    const perMinute = list.map((r) => (r.tasks / r.ms) * 60_000);
    say(
      `eval on ${name}: ${perMinute.map((x) => x.toFixed(1)).join(", ")} tasks/min; nodes ${JSON.stringify(list.map((r) => r.nodes))}`,
    );
    rows.push({
      what: `eval tasks per minute (8 tasks, 4 at a time)`,
      engine: name,
      perMinute,
      nodes: list.map((r) => r.nodes),
    });
  }
} finally {
  await cluster.close();
  kubectl("delete", "namespace", namespace, "--wait=false");
}

const out = join(root, "bench/results", `kubernetes-${new Date().toISOString().replace(/[:.]/g, "-")}.json`);
mkdirSync(join(root, "bench/results"), { recursive: true });
writeFileSync(
  out,
  JSON.stringify(
    { date: new Date().toISOString(), cpus: cpus().length, loadavg: loadavg(), image, runs, rows },
    null,
    2,
  ),
);
say(`wrote ${out}`);
rmSync(tmp, { recursive: true, force: true });
process.exit(0);
