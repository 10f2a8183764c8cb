// A checkpoint's save by the box's tree writer (box-agent/drydock_box/tree.py) against the same save
// by its script, in one box, in turn (the order swapped every round), at 10 and 10,000 files with
// 20 changed and one more file edited before each save. Both go through the box channel, as a
// session's saves do; the script's save is the request without the writer's part, so the box, the
// repository and the load are the same for both. Then a restore by the channel's program
// (box-agent/drydock_box/restore.py) against the same restore by its script, the same way, after
// the same mess before each: the changed files edited again, the added one removed, the removed
// one back, a new one.
//
//   npm run build && node bench/tree-writer.mjs        (BENCH_RUNS=N rounds, default 30)
//
// Writes bench/results/tree-writer-<time>.json (git ignores it), or BENCH_RESULTS_DIR.
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { makeRepo, removeDir } from "./lib/repos.mjs";
import { benchResults, spread } from "./lib/results.mjs";
import { compare, stats } from "./lib/stats.mjs";

const tmp = mkdtempSync(join(tmpdir(), "drydock-bench-"));
process.env.DRYDOCK_STATE_DIR = join(tmp, "state");

const { Engine } = await import("../dist/engine/engine.js");
const { defaultSandboxImage } = await import("../dist/sandbox/sandbox-image.js");
const { boxSh } = await import("../dist/sandbox/box-channel.js");
const { SessionManager } = await import("../dist/session/session-manager.js");
const { restoreCheckpoint, saveCheckpoint } = await import("../dist/workspace/box-checkpoint.js");
const { CHECKPOINT_SCRIPT } = await import("../dist/workspace/checkpoint-script.js");
const { setLogLevel } = await import("../dist/util/log.js");

setLogLevel("warning");
const runs = Number(process.env.BENCH_RUNS ?? 30);
const say = (text) => process.stderr.write(`[bench] ${text}\n`);
const engine = await Engine.connect();
const image = process.env.DRYDOCK_IMAGE ?? (await defaultSandboxImage(engine));
const { results, noteLoad, write } = benchResults("tree-writer", { image, runs }, say);
const MAX = 1 << 30;

for (const files of [10, 10_000]) {
  const label = `${files.toLocaleString("en-US")} files`;
  const repo = makeRepo(tmp, files);
  const manager = await SessionManager.start(engine, {});
  try {
    const session = await manager.create({ repo, image });
    const dirs = Math.min(100, files);
    const at = (i) => `pkg${i % dirs}/mod${i}.js`;
    const edited = Array.from({ length: Math.min(18, files - 1) }, (_, i) => at(i));
    const change = `cd /workspace && for f in ${edited.join(" ")}; do echo change >> $f; done && echo new > added.js && rm ${at(files - 1)}`;
    if ((await session.bash(change)).exitCode !== 0) throw new Error("the change failed");
    let slots = 0;
    const slot = () => (++slots).toString(16).padStart(16, "0");
    // The session's first save is the script's; the writer reads the tree it wrote meanwhile.
    await saveCheckpoint(session.box, slot(), { name: "bench", includeIgnored: false, maxBytes: MAX });
    await session.bash("sleep 1");
    noteLoad(label);
    const writer = [];
    const script = [];
    let byWriter = 0;
    for (let round = 0; round < runs; round++) {
      for (const which of round % 2 ? ["writer", "script"] : ["script", "writer"]) {
        const edit = await session.bash(`echo ${round}${which} >> /workspace/${at(3)}`);
        if (edit.exitCode !== 0) throw new Error(edit.output);
        const start = performance.now();
        if (which === "writer") {
          const saved = await saveCheckpoint(session.box, slot(), {
            name: "bench",
            includeIgnored: false,
            maxBytes: MAX,
          });
          writer.push(performance.now() - start);
          if (saved.byTreeWriter) byWriter++;
        } else {
          const saved = await boxSh(session.box, CHECKPOINT_SCRIPT, ["save", slot(), "0", String(MAX), "0"], {
            timeoutMs: 120_000,
            changes: "start",
          });
          script.push(performance.now() - start);
          if (saved.exitCode !== 0) throw new Error(saved.stderr.toString());
        }
      }
    }
    const a = stats(writer);
    const b = stats(script);
    const versus = compare(a, b);
    results.rows.push({ name: `checkpoint save (${label})`, writer: a, script: b, versus, byWriter });
    say(
      `checkpoint save (${label}) | tree writer ${spread(a)} (${byWriter} of ${runs} by the writer) | script ${spread(b)} | ${versus.verdict} (p ${versus.p.toFixed(3)}, ${versus.test}), lower in ${writer.filter((x, i) => x < script[i]).length} of ${runs}`,
    );

    const target = slot();
    const kept = await saveCheckpoint(session.box, target, { name: "bench", includeIgnored: false, maxBytes: MAX });
    const mess = `cd /workspace && for f in ${edited.join(" ")}; do echo mess >> $f; done && rm -f added.js && mkdir -p ${at(files - 1).split("/")[0]} && echo back > ${at(files - 1)} && echo junk > junk.js`;
    noteLoad(`${label}: restore`);
    const program = [];
    const scripted = [];
    let byProgram = 0;
    for (let round = 0; round < runs; round++) {
      for (const which of round % 2 ? ["program", "script"] : ["script", "program"]) {
        const messed = await session.bash(mess);
        if (messed.exitCode !== 0) throw new Error(messed.output);
        const start = performance.now();
        if (which === "program") {
          const back = await restoreCheckpoint(session.box, target, {
            name: "bench",
            commit: kept.commit,
            includeIgnored: false,
          });
          program.push(performance.now() - start);
          if (back.byChannel) byProgram++;
        } else {
          const back = await boxSh(session.box, CHECKPOINT_SCRIPT, ["restore", target, kept.commit, "0", "0", "0"], {
            timeoutMs: 120_000,
            changes: true,
          });
          scripted.push(performance.now() - start);
          if (back.exitCode !== 0) throw new Error(back.stderr.toString());
        }
      }
    }
    const c = stats(program);
    const d = stats(scripted);
    const restoreVersus = compare(c, d);
    results.rows.push({ name: `checkpoint restore (${label})`, program: c, script: d, versus: restoreVersus, byProgram });
    say(
      `checkpoint restore (${label}) | channel's program ${spread(c)} (${byProgram} of ${runs} by the program) | script ${spread(d)} | ${restoreVersus.verdict} (p ${restoreVersus.p.toFixed(3)}, ${restoreVersus.test}), lower in ${program.filter((x, i) => x < scripted[i]).length} of ${runs}`,
    );
    await manager.destroy(session.id);
  } finally {
    await manager.closeAll();
    removeDir(repo);
  }
}

write();
removeDir(tmp);
