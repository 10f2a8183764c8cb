// Two builds of drydock in one interleaved loop, for a change that must cost nothing: this
// checkout's dist/ against another checkout's (`node bench/ab-builds.mjs /path/to/other`, both
// built, the other usually a worktree of the commit before). Figures: the box channel's start in
// one box (the box agent's exec to its ready line), and a cold session ready at 10 files (box,
// copy-in, shell and channel; Session.create), each with a sign test on the per-round differences.
// `first`: a session's first checkpoint at 10,000 files with 20 changed, from a pool prefilled
// with the repository, as bench/checkpoint.mjs times it (the changes made through the shell, then
// at once the checkpoint). `start`: a warm session from that pool, then at once its bash `true`
// round trip and its first diff (what a session's start must not slow), each timed on its own.
// `fork`: a fresh session's state (the same 20 changes) forked into two copies at once, from a
// pool of three prefilled boxes (the session's and the two copies'), per copy.
//   BENCH_RUNS=N   rounds (default 20; the channel's start runs twice as many)
//   AB_ONLY=channel,cold,first,start,fork   only these figures (default channel,cold)
import { mkdtempSync, rmSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { interleaved, compare, stats } from "./lib/stats.mjs";
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
console.log(
  `load average ${loadavg()[0].toFixed(2)}; ${runs} rounds; this ${builds.this}, other ${builds.other}`,
);
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
      const r = await interleaved(
        runs * 2,
        { this: await open("this"), other: await open("other") },
        { warmup: 2 },
      );
      report("box channel start, one box", r);
    } finally {
      await made.box.remove();
      rmSync(made.gatewayDir, { recursive: true, force: true });
    }
  }
  if (only.includes("first") || only.includes("start") || only.includes("fork")) {
    const files = Number(process.env.AB_FILES ?? 10_000);
    const repo = makeRepo(tmp, files);
    const dirs = Math.min(100, files);
    const at = (i) => `pkg${i % dirs}/mod${i}.js`;
    const edited = Array.from({ length: Math.min(18, files - 1) }, (_, i) => at(i)).join(" ");
    const change = `cd /workspace && for f in ${edited}; do echo change >> $f; done && echo new > added-0.js && rm ${at(files - 1)} && cd pkg1`;
    const managers = {};
    for (const build of Object.keys(builds)) {
      const { SessionManager } = await load(build, "session/session-manager.js");
      managers[build] = await SessionManager.start(engine, {
        pool: { size: only.includes("fork") ? 3 : 1, profile: { image }, prefillRepo: repo },
      });
    }
    const done = async (build, s) => {
      await managers[build].destroy(s.id);
      await managers[build].pool.full();
    };
    try {
      if (only.includes("first")) {
        const first = (build) => ({
          before: async () => {
            await managers[build].pool.full();
            const s = await managers[build].create({ repo, image });
            const r = await s.bash(change);
            if (r.exitCode !== 0) throw new Error(r.output);
            return s;
          },
          run: (s) => s.checkpoint("first"),
          after: (_value, s) => done(build, s),
        });
        report(
          `a session's first checkpoint, ${files} files, 20 changed`,
          await interleaved(runs, { this: first("this"), other: first("other") }),
        );
      }
      if (only.includes("fork")) {
        const fork = async (build) => {
          const { forkSession } = await load(build, "session/session-fork.js");
          const m = managers[build];
          return {
            before: async () => {
              await m.pool.full();
              const s = await m.create({ repo, image });
              const r = await s.bash(change);
              if (r.exitCode !== 0) throw new Error(r.output);
              return s;
            },
            run: (s) =>
              forkSession(
                s,
                { n: 2 },
                (options) => m.create(options),
                (x) => m.destroy(x.id),
              ),
            after: async (made, s) => {
              await Promise.all([...made, s].map((x) => m.destroy(x.id)));
              await m.pool.full();
            },
          };
        };
        const r = await interleaved(runs, { this: await fork("this"), other: await fork("other") });
        const perCopy = (x) => ({ ...stats(x.samples.map((v) => v / 2)), paired: x.paired });
        report(`a fresh session's state forked into 2 at once, per copy, ${files} files`, {
          this: perCopy(r.this),
          other: perCopy(r.other),
        });
      }
      if (only.includes("start")) {
        const parts = { this: { bash: [], diff: [] }, other: { bash: [], diff: [] } };
        const start = (build) => ({
          before: () => managers[build].pool.full(),
          run: () => managers[build].create({ repo, image }),
          after: async (s, _context, i) => {
            let t = performance.now();
            await s.bash("true");
            const bash = performance.now() - t;
            t = performance.now();
            await s.diff();
            const diff = performance.now() - t;
            if (i >= 1) {
              parts[build].bash.push(bash);
              parts[build].diff.push(diff);
            }
            await done(build, s);
          },
        });
        report(
          `warm session ready (prefilled), ${files} files`,
          await interleaved(runs, { this: start("this"), other: start("other") }),
        );
        for (const part of ["bash", "diff"]) {
          const r = {
            this: { ...stats(parts.this[part]), paired: "start" },
            other: { ...stats(parts.other[part]), paired: "start" },
          };
          report(part === "bash" ? "its bash `true` round trip, at once" : "its first diff, at once", r);
        }
      }
    } finally {
      for (const m of Object.values(managers)) await m.closeAll();
    }
  }
  if (only.includes("cold")) {
    const repo = makeRepo(tmp, 10);
    const create = async (build) => {
      const { Session } = await load(build, "session/session.js");
      return { run: () => Session.create(engine, { repo, image }), after: (session) => session.destroy() };
    };
    report(
      "cold session ready, 10 files",
      await interleaved(runs, { this: await create("this"), other: await create("other") }),
    );
  }
} finally {
  rmSync(tmp, { recursive: true, force: true });
}
console.log(`load average at the end ${loadavg()[0].toFixed(2)}`);
process.exit(0);
