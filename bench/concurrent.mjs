// Many sessions at once. 20 sessions started at once (cold, 1,000-file repository): time until all
// are ready, the host's peak memory while they start, and the host memory each idle session holds;
// beside it, 20 `docker run` + `docker cp` of the same tree at once. Then 100 sessions held idle at
// once (BENCH_IDLE_SESSIONS, 0: skip): the host memory each holds, by part, and the round trip of
// `true` on each of them, in turn (each session's own p95 too) and all at once.
//
// Alone: `node bench/concurrent.mjs [N]` (after `npm run build`) runs only the idle part with N
// sessions (default 100), prints its figures and writes bench/results/run-idle-<date>.json.
import { execFile } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { promisify } from "node:util";
import {
  cgroupMiB,
  hostUsedMiB,
  processTree,
  sampleMax,
  shimRssMiB,
  treePssMiB,
  treeRssMiB,
} from "./lib/host-memory.mjs";
import { makeRepo, removeDir } from "./lib/repos.mjs";
import { stats } from "./lib/stats.mjs";

const run = promisify(execFile);
const SESSIONS = 20;
/** Calls of `true` per idle session, in turn. */
const ROUNDS = 20;
const settle = (ms) => new Promise((r) => setTimeout(r, ms));

export async function concurrentSessions(ctx) {
  const { SessionManager } = await import("../dist/session/session-manager.js");
  const repo = ctx.repo(1000);
  const runs = Math.max(1, Math.min(3, ctx.runs));
  const m = { ready: [], peakHost: [], peakTree: [], perSessionHost: [], perSessionTree: [], perSessionShim: [], perSessionBox: [] };
  const d = { ready: [], peakHost: [] };
  for (let i = 0; i < runs; i++) {
    const manager = await SessionManager.start(ctx.engine);
    await settle(1000);
    const hostBefore = hostUsedMiB();
    const treeBefore = treePssMiB();
    const peakHost = sampleMax(hostUsedMiB);
    const peakTree = sampleMax(() => treePssMiB(), 250);
    const t = performance.now();
    const sessions = await Promise.all(Array.from({ length: SESSIONS }, () => manager.create({ repo, image: ctx.image })));
    m.ready.push(performance.now() - t);
    m.peakHost.push(peakHost.stop() - hostBefore);
    m.peakTree.push(peakTree.stop() - treeBefore);
    await settle(2000);
    const ids = sessions.map((s) => s.box.id);
    const tree = (treePssMiB() - treeBefore) / SESSIONS;
    const shim = shimRssMiB(ids) / SESSIONS;
    const box = ids.reduce((a, id) => a + cgroupMiB(id), 0) / SESSIONS;
    m.perSessionTree.push(tree);
    m.perSessionShim.push(shim);
    m.perSessionBox.push(box);
    m.perSessionHost.push((hostUsedMiB() - hostBefore) / SESSIONS);
    await manager.closeAll();
    await settle(1000);

    const dockerBefore = hostUsedMiB();
    const dockerPeak = sampleMax(hostUsedMiB);
    const t2 = performance.now();
    const boxes = await Promise.all(
      Array.from({ length: SESSIONS }, async () => {
        const id = (await run("docker", ["run", "-d", "--network", "none", ctx.image, "sleep", "infinity"])).stdout.trim();
        await run("docker", ["cp", `${repo}/.`, `${id}:/workspace/`]);
        return id;
      }),
    );
    d.ready.push(performance.now() - t2);
    d.peakHost.push(dockerPeak.stop() - dockerBefore);
    await run("docker", ["rm", "-f", ...boxes]);
    await settle(1000);
  }
  const docker = "20 × docker run + docker cp";
  ctx.row("20 concurrent sessions", "time until all are ready", stats(m.ready), docker, stats(d.ready));
  ctx.row("20 concurrent sessions", "peak host memory while starting (MiB)", stats(m.peakHost), docker, stats(d.peakHost), "MiB");
  ctx.row("20 concurrent sessions", "drydock process and its children, peak (MiB)", stats(m.peakTree), null, null, "MiB");
  ctx.row("per idle session", "host memory, all of it (MiB)", stats(m.perSessionHost), null, null, "MiB");
  ctx.row("per idle session", "drydock process and its children (MiB)", stats(m.perSessionTree), null, null, "MiB");
  ctx.row("per idle session", "containerd-shim (MiB)", stats(m.perSessionShim), null, null, "MiB");
  ctx.row("per idle session", "in the box's cgroup: processes + tmpfs (MiB)", stats(m.perSessionBox), null, null, "MiB");
  const idle = Number(process.env.BENCH_IDLE_SESSIONS ?? 100);
  if (idle > 0) await idleSessions(ctx, idle);
}

/**
 * `count` sessions held idle at once (started ten at a time; their start is not the figure): the
 * host memory each holds, by part, then `true` on each in turn (20 rounds) and on all at once
 * (5 rounds). Every box is removed at the end, whatever happens.
 */
export async function idleSessions(ctx, count = 100) {
  const { SessionManager } = await import("../dist/session/session-manager.js");
  const repo = ctx.repo(1000);
  const group = `${count} idle sessions`;
  const manager = await SessionManager.start(ctx.engine);
  try {
    // One session made and removed first, so loading code is not counted against the sessions.
    const first = await manager.create({ repo, image: ctx.image });
    await first.bash("true");
    await manager.destroy(first.id);
    global.gc?.();
    await settle(2000);
    const before = { rss: treeRssMiB(), pss: treePssMiB(), processes: processTree().length, host: hostUsedMiB() };
    const sessions = [];
    const t = performance.now();
    for (let i = 0; i < count; i += 10) {
      const wave = Math.min(10, count - i);
      sessions.push(...(await Promise.all(Array.from({ length: wave }, () => manager.create({ repo, image: ctx.image })))));
      ctx.say?.(`${sessions.length}/${count} sessions ready`);
    }
    const readyMs = performance.now() - t;
    for (const s of sessions) await s.bash("true");
    global.gc?.();
    await settle(3000);
    const ids = sessions.map((s) => s.box.id);
    const per = (value) => stats([value / count]);
    const after = { rss: treeRssMiB(), pss: treePssMiB(), processes: processTree().length, host: hostUsedMiB() };
    ctx.row(group, `all started, ten at a time (ms; ${Math.round(readyMs / count)} ms a session)`, stats([readyMs]));
    ctx.row(group, "per session: drydock process and its children, RSS (MiB)", per(after.rss - before.rss), null, null, "MiB");
    ctx.row(group, "per session: drydock process and its children, PSS (MiB)", per(after.pss - before.pss), null, null, "MiB");
    ctx.row(group, "per session: host processes drydock runs", per(after.processes - before.processes), null, null, "processes");
    ctx.row(group, "per session: containerd-shim, PSS (MiB)", per(shimRssMiB(ids)), null, null, "MiB");
    ctx.row(group, "per session: in the box's cgroup, processes + tmpfs (MiB)", per(ids.reduce((a, id) => a + cgroupMiB(id), 0)), null, null, "MiB");
    ctx.row(group, "per session: host memory, all of it (MiB; noisy: the whole machine)", per(after.host - before.host), null, null, "MiB");

    // `true` on each session in turn: what a caller using one of 100 live sessions sees.
    const inTurn = [];
    const bySession = new Map(sessions.map((s) => [s.id, []]));
    for (let round = 0; round < ROUNDS; round++) {
      for (const s of sessions) {
        const t0 = performance.now();
        const r = await s.bash("true");
        const ms = performance.now() - t0;
        if (r.exitCode !== 0) throw new Error(`true answered ${r.exitCode} in session ${s.id}`);
        inTurn.push(ms);
        bySession.get(s.id).push(ms);
      }
    }
    const ownP95 = [...bySession.values()].map((samples) => stats(samples).p95);
    ctx.row(group, `\`true\` on each in turn, ${ROUNDS} rounds`, stats(inTurn));
    ctx.row(group, `\`true\`: each session's own p95 over its ${ROUNDS} calls`, stats(ownP95));
    ctx.row(group, "sessions whose own p95 is within 50 ms", stats([ownP95.filter((ms) => ms <= 50).length]), null, null, "sessions");
    // All at once: 100 commands queue for 2 cores.
    const burst = [];
    for (let round = 0; round < 5; round++) {
      const t0 = performance.now();
      await Promise.all(
        sessions.map(async (s) => {
          await s.bash("true");
          burst.push(performance.now() - t0);
        }),
      );
      await settle(500);
    }
    ctx.row(group, `\`true\` on all ${count} at once, 5 rounds: until each answers`, stats(burst));
  } finally {
    await manager.closeAll();
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  const count = Number(process.argv[2] ?? 100);
  const tmp = mkdtempSync(join(tmpdir(), "drydock-bench-idle-"));
  process.env.DRYDOCK_STATE_DIR = join(tmp, "state");
  const { Engine } = await import("../dist/engine/engine.js");
  const { defaultSandboxImage } = await import("../dist/sandbox/sandbox-image.js");
  const { setLogLevel } = await import("../dist/util/log.js");
  setLogLevel("warning");
  const engine = await Engine.connect();
  const image = process.env.DRYDOCK_IMAGE ?? (await defaultSandboxImage(engine));
  const rows = [];
  const repos = new Map();
  const ctx = {
    engine,
    image,
    runs: 1,
    say: (text) => process.stderr.write(`[bench] ${text}\n`),
    repo: (files) => {
      if (!repos.has(files)) repos.set(files, makeRepo(tmp, files));
      return repos.get(files);
    },
    row(group, name, drydock, baselineName, baseline, unit = "ms") {
      rows.push({ group, name, unit, drydock, baselineName, baseline });
      const f = (s) => (s.n > 1 ? `median ${s.median.toFixed(2)}, p95 ${s.p95.toFixed(2)}, max ${s.max.toFixed(2)} (n ${s.n})` : s.median.toFixed(2));
      console.log(`${group} | ${name} | ${f(drydock)}`);
    },
  };
  try {
    await idleSessions(ctx, count);
  } finally {
    removeDir(tmp);
  }
  const date = new Date().toISOString();
  const file = new URL(`./results/run-idle-${date.replace(/[:.]/g, "-")}.json`, import.meta.url);
  const version = await engine.version();
  writeFileSync(file, JSON.stringify({ date, image, engine: version.version, count, rows }, null, 2) + "\n");
  console.log(`wrote ${file.pathname}`);
}
