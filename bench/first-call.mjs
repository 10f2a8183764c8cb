// The first file operation of a session: a session taken from a pool prefilled with the
// repository (what `drydock serve` keeps), then at once its first git_diff, or its first
// file_editor view, beside `docker exec git diff` and `docker exec cat -n` as the first exec into
// a session's box taken the same way. One interleaved loop at 10 and at 10,000 files; every
// alternative gets a session of its own each round, so each measures a first call.
import { dockerExec } from "./file-editor.mjs";
import { interleaved } from "./lib/stats.mjs";

const EDIT = "sed -i '1s/.*/\\/\\/ changed in the box/' pkg5/mod5.js";

export async function firstCall(ctx) {
  const { SessionManager } = await import("../dist/session/session-manager.js");
  const { runEdit } = await import("../dist/tools/file-editor.js");
  const { gitDiffTool } = await import("../dist/tools/git-diff-tool.js");
  const { engine, image } = ctx;
  const toolContext = (s) => ({ clientId: "bench", services: { sessions: { resolve: async () => s } } });
  const changed = (text) => {
    if (!String(text).includes("changed in the box")) throw new Error("the diff lost the change");
  };
  const viewed = (text) => {
    if (!String(text).includes("function f5")) throw new Error("the view lost the file");
  };
  for (const files of [10, 10000]) {
    const repo = ctx.repo(files);
    const runs = files === 10000 ? Math.max(6, Math.ceil(ctx.runs / 3)) : ctx.runs;
    const manager = await SessionManager.start(engine, {
      pool: { size: 1, profile: { image }, prefillRepo: repo },
    });
    let notWarm = 0;
    // A fresh session each time; the edit (through the shell, as an agent makes it) and the pool's
    // refill behind the session both end before the clock starts.
    const fresh = (edit) => async () => {
      await manager.pool.full();
      const s = await manager.create({ repo, image });
      if (!s.warm) notWarm++;
      if (edit) await s.bash(EDIT);
      await manager.pool.full();
      return s;
    };
    const done = async (_value, s) => {
      await manager.destroy(s.id);
    };
    let r;
    try {
      r = await interleaved(runs, {
        diff: {
          before: fresh(true),
          run: async (s) => changed((await gitDiffTool.run({}, toolContext(s))).diff),
          after: done,
        },
        dockerDiff: { before: fresh(true), run: (s) => changed(dockerExec(s, "git", "diff")), after: done },
        view: {
          before: fresh(false),
          run: async (s) => viewed(JSON.stringify(await runEdit(s, { operation: "view", path: "pkg5/mod5.js" }))),
          after: done,
        },
        dockerView: { before: fresh(false), run: (s) => viewed(dockerExec(s, "cat", "-n", "pkg5/mod5.js")), after: done },
      });
    } finally {
      await manager.closeAll();
    }
    if (notWarm) throw new Error(`${notWarm} sessions did not get a prefilled box from the pool`);
    const label = `${files.toLocaleString("en-US")} files`;
    ctx.row(`first call of a session (${label})`, "git_diff", r.diff, "docker exec git diff", r.dockerDiff);
    ctx.row(`first call of a session (${label})`, "file_editor view", r.view, "docker exec cat -n", r.dockerView);
  }
}
