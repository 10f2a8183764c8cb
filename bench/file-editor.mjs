// file_editor view and replace on a 1,000-line file, each in one loop with a single `docker exec`
// doing the same (cat -n; a one-shot Python string replace); then git_diff and session_diff after
// a one-line change, each in one loop with `docker exec git diff`, on a 10-file and a 10,000-file
// repository, and a file view on both: none should grow with the repository.
import { execFileSync } from "node:child_process";
import { interleaved } from "./lib/stats.mjs";

const REPLACE_PY =
  "import sys\np=sys.argv[1];s=open(p).read();o,n=sys.argv[2],sys.argv[3]\nassert s.count(o)==1\nopen(p,'w').write(s.replace(o,n))";

/** `docker exec` as the box user in /workspace, the way a script would do it by hand. */
export const dockerExec = (s, ...argv) =>
  execFileSync("docker", ["exec", "-u", "1000", "-w", "/workspace", s.box.id, ...argv], { maxBuffer: 1 << 26 });

export async function fileEditor(ctx) {
  const { Session } = await import("../dist/session/session.js");
  const { runEdit } = await import("../dist/tools/file-editor.js");
  const s = await Session.create(ctx.engine, { repo: ctx.repo(10), image: ctx.image });
  try {
    await s.bash(`seq 1 1000 | sed 's/^/line /; s/$/: the quick brown fox jumps over the lazy dog/' > big.txt`);
    const view = await interleaved(ctx.runs, {
      drydock: { run: () => runEdit(s, { operation: "view", path: "big.txt" }) },
      docker: { run: () => dockerExec(s, "cat", "-n", "big.txt") },
    }, { warmup: 2 });
    ctx.row("file_editor (1,000-line file)", "view", view.drydock, "docker exec cat -n", view.docker);

    // Both alternatives flip the same line back and forth; `upper` says which way it is now.
    const a = "line 500: the quick";
    const b = "line 500: THE quick";
    let upper = false;
    const flip = () => {
      const [from, to] = upper ? [b, a] : [a, b];
      upper = !upper;
      return [from, to];
    };
    const replace = await interleaved(ctx.runs, {
      drydock: {
        run: () => {
          const [from, to] = flip();
          return runEdit(s, { operation: "replace", path: "big.txt", old_string: from, new_string: to });
        },
      },
      docker: { run: () => dockerExec(s, "python3", "-c", REPLACE_PY, "big.txt", ...flip()) },
    }, { warmup: 2 });
    ctx.row("file_editor (1,000-line file)", "replace", replace.drydock, "docker exec python3 replace", replace.docker);
  } finally {
    await s.destroy();
  }
}

export async function diffOut(ctx) {
  const { Session } = await import("../dist/session/session.js");
  const { runEdit } = await import("../dist/tools/file-editor.js");
  const { gitDiffTool } = await import("../dist/tools/git-diff-tool.js");
  const { sessionDiff } = await import("../dist/tools/session-tools.js");
  // BENCH_DIFF_FILES=10,50000 times the diffs at other sizes (default 10 and 10,000 files).
  const [smallFiles, largeFiles] = (process.env.BENCH_DIFF_FILES ?? "10,10000").split(",").map(Number);
  const small = await Session.create(ctx.engine, { repo: ctx.repo(smallFiles), image: ctx.image });
  const large = await Session.create(ctx.engine, { repo: ctx.repo(largeFiles), image: ctx.image, workspaceMB: 2048, memoryMB: 4096 });
  try {
    for (const s of [small, large]) {
      // No `git status` here: the agent's index is as copy-in left it, as on a session's first diff.
      await s.bash("sed -i '1s/.*/\\/\\/ changed in the box/' pkg5/mod5.js");
    }
    const changed = (text) => {
      if (!String(text).includes("changed in the box")) throw new Error("the diff lost the change");
    };
    const toolContext = (s) => ({ clientId: "bench", services: { sessions: { resolve: async () => s } } });
    for (const [s, label] of [
      [small, `${smallFiles.toLocaleString("en-US")}-file repository`],
      [large, `${largeFiles.toLocaleString("en-US")}-file repository`],
    ]) {
      const r = await interleaved(ctx.runs, {
        gitDiff: { run: async () => changed((await gitDiffTool.run({}, toolContext(s))).diff) },
        sessionDiff: { run: async () => changed((await sessionDiff.run({}, toolContext(s))).diff) },
        docker: { run: () => changed(dockerExec(s, "git", "diff")) },
      }, { warmup: 2 });
      ctx.row(`diff, one-line change (${label})`, "git_diff", r.gitDiff, "docker exec git diff", r.docker);
      ctx.row(`diff, one-line change (${label})`, "session_diff (patch and stat)", r.sessionDiff, "docker exec git diff", r.docker);
    }
    const view = (s) => () => runEdit(s, { operation: "view", path: "pkg5/mod5.js" });
    const views = await interleaved(ctx.runs, { large: { run: view(large) }, small: { run: view(small) } });
    ctx.row("file_editor view of one file", `${largeFiles.toLocaleString("en-US")}-file repository`, views.large, `the same, ${smallFiles.toLocaleString("en-US")}-file repository`, views.small);
  } finally {
    await Promise.all([small.destroy(), large.destroy()]);
  }
}
