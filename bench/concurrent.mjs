// 20 sessions started at once (cold, 1,000-file repository): time until all are ready, the host's
// peak memory while they start, and the host memory each idle session holds. Beside it, 20
// `docker run` + `docker cp` of the same tree at once.
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { cgroupMiB, hostUsedMiB, sampleMax, shimRssMiB, treeRssMiB } from "./lib/host-memory.mjs";
import { stats } from "./lib/stats.mjs";

const run = promisify(execFile);
const SESSIONS = 20;
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
    const treeBefore = treeRssMiB();
    const peakHost = sampleMax(hostUsedMiB);
    const peakTree = sampleMax(() => treeRssMiB(), 250);
    const t = performance.now();
    const sessions = await Promise.all(Array.from({ length: SESSIONS }, () => manager.create({ repo, image: ctx.image })));
    m.ready.push(performance.now() - t);
    m.peakHost.push(peakHost.stop() - hostBefore);
    m.peakTree.push(peakTree.stop() - treeBefore);
    await settle(2000);
    const ids = sessions.map((s) => s.box.id);
    const tree = (treeRssMiB() - treeBefore) / SESSIONS;
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
  ctx.row("20 concurrent sessions", "drydock process + docker CLI children, peak (MiB)", stats(m.peakTree), null, null, "MiB");
  ctx.row("per idle session", "host memory, all of it (MiB)", stats(m.perSessionHost), null, null, "MiB");
  ctx.row("per idle session", "drydock process + its docker CLI child (MiB)", stats(m.perSessionTree), null, null, "MiB");
  ctx.row("per idle session", "containerd-shim (MiB)", stats(m.perSessionShim), null, null, "MiB");
  ctx.row("per idle session", "in the box's cgroup: processes + tmpfs (MiB)", stats(m.perSessionBox), null, null, "MiB");
}
