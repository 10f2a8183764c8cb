// file_editor view and replace on a 1,000-line file, against the same done with `docker exec`
// (cat -n; a one-shot Python string replace), and file reads and diff-out on a 10,000-file
// repository with a one-line change beside the same on a 10-file one: neither should grow with
// the repository.
import { execFileSync } from "node:child_process";
import { timed } from "./lib/stats.mjs";

const REPLACE_PY =
  "import sys\np=sys.argv[1];s=open(p).read();o,n=sys.argv[2],sys.argv[3]\nassert s.count(o)==1\nopen(p,'w').write(s.replace(o,n))";

export async function fileEditor(ctx) {
  const { Session } = await import("../dist/session/session.js");
  const { runEdit } = await import("../dist/tools/file-editor.js");
  const s = await Session.create(ctx.engine, { repo: ctx.repo(10), image: ctx.image });
  try {
    await s.bash(`seq 1 1000 | sed 's/^/line /; s/$/: the quick brown fox jumps over the lazy dog/' > big.txt`);
    const cli = ["exec", "-u", "1000", "-w", "/workspace", s.box.id];
    const a = "line 500: the quick";
    const b = "line 500: THE quick";
    // An even number of replaces in each loop leaves the file as the next loop expects it.
    const evenWarmup = ctx.runs % 2 === 0 ? 2 : 1;
    ctx.row(
      "file_editor (1,000-line file)",
      "view",
      await timed(ctx.runs, () => runEdit(s, { operation: "view", path: "big.txt" })),
      "docker exec cat -n",
      await timed(ctx.runs, () => execFileSync("docker", [...cli, "cat", "-n", "big.txt"])),
    );
    ctx.row(
      "file_editor (1,000-line file)",
      "replace",
      await timed(
        ctx.runs,
        (_, i) =>
          runEdit(s, { operation: "replace", path: "big.txt", old_string: i % 2 ? b : a, new_string: i % 2 ? a : b }),
        { warmup: evenWarmup },
      ),
      "docker exec python3 replace",
      await timed(
        ctx.runs,
        (_, i) => execFileSync("docker", [...cli, "python3", "-c", REPLACE_PY, "big.txt", i % 2 ? b : a, i % 2 ? a : b]),
        { warmup: evenWarmup },
      ),
    );
  } finally {
    await s.destroy();
  }
}

export async function diffOut(ctx) {
  const { Session } = await import("../dist/session/session.js");
  const { runEdit } = await import("../dist/tools/file-editor.js");
  const small = await Session.create(ctx.engine, { repo: ctx.repo(10), image: ctx.image });
  const large = await Session.create(ctx.engine, { repo: ctx.repo(10000), image: ctx.image });
  try {
    for (const s of [small, large]) {
      const r = await s.bash("sed -i '1s/.*/\\/\\/ changed in the box/' pkg5/mod5.js && git status --short");
      if (!r.output.includes("pkg5/mod5.js")) throw new Error(`the edit did not show: ${r.output}`);
    }
    const diff = (s) => async () => {
      if (!(await s.diff()).includes("changed in the box")) throw new Error("the diff lost the change");
    };
    ctx.row(
      "diff-out, one-line change",
      "10,000-file repository",
      await timed(ctx.runs, diff(large)),
      "the same, 10-file repository",
      await timed(ctx.runs, diff(small)),
    );
    const view = (s) => () => runEdit(s, { operation: "view", path: "pkg5/mod5.js" });
    ctx.row(
      "file_editor view of one file",
      "10,000-file repository",
      await timed(ctx.runs, view(large)),
      "the same, 10-file repository",
      await timed(ctx.runs, view(small)),
    );
  } finally {
    await Promise.all([small.destroy(), large.destroy()]);
  }
}
