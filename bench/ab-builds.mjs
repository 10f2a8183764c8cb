// Two builds of drydock in one interleaved loop, for a change that must cost nothing: this
// checkout's dist/ against another checkout's (`node bench/ab-builds.mjs /path/to/other`, both
// built, the other usually a worktree of the commit before). Figures: the box channel's start in
// one box (the box agent's exec to its ready line), and a cold session ready at 10 files (box,
// copy-in, shell and channel; Session.create), each with a sign test on the per-round differences.
//   BENCH_RUNS=N   rounds (default 20; the channel's start runs twice as many)
//   AB_ONLY=channel,cold   only these figures
import { mkdtempSync, rmSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { interleaved, compare } from "./lib/stats.mjs";
import { makeRepo } from "./lib/repos.mjs";

const other = process.argv[2];
if (!other) {
  console.error("usage: node bench/ab-builds.mjs <other checkout, built>");
  process.exit(2);
}
const builds = { this: resolve(new URL("..", import.meta.url).pathname), other: resolve(other) };
const tmp = mkdtempSync(join(tmpdir(), "drydock-ab-"));
process.env.DRYDOCK_STATE_DIR = join(tmp, "state");
const load = (build, path) => import(join(builds[build], "dist", path));
const { Engine } = await load("this", "engine/engine.js");
const { defaultSandboxImage } = await load("this", "sandbox/sandbox-image.js");
for (const build of Object.keys(builds)) (await load(build, "util/log.js")).setLogLevel("warning");
const engine = await Engine.connect();
const image = process.env.DRYDOCK_IMAGE ?? (await defaultSandboxImage(engine));
const runs = Number(process.env.BENCH_RUNS ?? 20);
const only = process.env.AB_ONLY?.split(",") ?? ["channel", "cold"];
const f = (s) => `${s.median.toFixed(1)} (p10-p90 ${s.p10.toFixed(1)}-${s.p90.toFixed(1)})`;
const report = (name, r) => {
  const v = compare(r.this, r.other);
  console.log(`| ${name} | ${f(r.this)} | ${f(r.other)} | ${v.verdict} (${v.test}, p = ${v.p.toFixed(3)}) |`);
};
console.log(`load average ${loadavg()[0].toFixed(2)}; ${runs} rounds; this ${builds.this}, other ${builds.other}`);
console.log("| figure (ms) | this | other | this against other |\n|---|---:|---:|---|");
try {
  if (only.includes("channel")) {
    const { createSessionBox } = await load("this", "session/session-box.js");
    const { newSessionId } = await load("this", "session/session-id.js");
    const made = await createSessionBox(engine, newSessionId(), { image });
    const open = async (build) => {
      const { BoxChannel } = await load(build, "sandbox/box-channel.js");
      return {
        run: async () => {
          const channel = BoxChannel.open(made.box);
          if (!(await channel.ready)) throw new Error(`the ${build} build's box channel did not start`);
          return channel;
        },
        after: (channel) => channel.close(),
      };
    };
    try {
      const r = await interleaved(runs * 2, { this: await open("this"), other: await open("other") }, { warmup: 2 });
      report("box channel start, one box", r);
    } finally {
      await made.box.remove();
      rmSync(made.gatewayDir, { recursive: true, force: true });
    }
  }
  if (only.includes("cold")) {
    const repo = makeRepo(tmp, 10);
    const create = async (build) => {
      const { Session } = await load(build, "session/session.js");
      return { run: () => Session.create(engine, { repo, image }), after: (session) => session.destroy() };
    };
    report("cold session ready, 10 files", await interleaved(runs, { this: await create("this"), other: await create("other") }));
  }
} finally {
  rmSync(tmp, { recursive: true, force: true });
}
console.log(`load average at the end ${loadavg()[0].toFixed(2)}`);
process.exit(0);
