// Shell round trip through the persistent shell, against a `docker exec` per command (CLI) and a
// dockerode exec per command (API), for `true` and for a command printing 1 MB; and what keeping
// stderr apart and saving the shell's state after each command cost, against the same shell
// without them (stderr on stdout's terminal, no state saved).
import { execFileSync } from "node:child_process";
import { stats, timed } from "./lib/stats.mjs";

const MB_COMMAND = "yes 'drydock benchmark output: a line of text, seventy bytes or so long' | head -c 1000000";

export async function shellRoundTrip(ctx) {
  const { Session } = await import("../dist/session/session.js");
  const { PtyShell } = await import("../dist/sandbox/pty-shell.js");
  const s = await Session.create(ctx.engine, { repo: ctx.repo(10), image: ctx.image, maxOutputBytes: 2_000_000 });
  try {
    const id = s.box.id;
    const check = (bytes) => {
      if (bytes < 1_000_000) throw new Error(`1 MB command returned ${bytes} bytes`);
    };
    const cli = ["exec", "-u", "1000", "-w", "/workspace", id];
    ctx.row(
      "shell round trip",
      "`true`",
      await timed(ctx.runs, () => s.bash("true"), { warmup: 3 }),
      "docker exec per command (CLI)",
      await timed(ctx.runs, () => execFileSync("docker", [...cli, "true"]), { warmup: 3 }),
    );
    ctx.row(
      "shell round trip",
      "`true`",
      null,
      "dockerode exec per command (API)",
      await timed(ctx.runs, () => s.box.exec(["true"]), { warmup: 3 }),
    );
    // A caller that reads each answer before sending the next command (any model does): the
    // frame resets the terminal and saves the shell's state after the answer, so this is the
    // round trip such a caller sees.
    ctx.row(
      "shell round trip",
      "`true`, sent 5 ms after the last answer",
      await timed(ctx.runs, () => s.bash("true"), {
        warmup: 3,
        before: () => new Promise((resolve) => setTimeout(resolve, 5)),
      }),
    );
    ctx.row(
      "shell round trip",
      "1 MB of output",
      await timed(ctx.runs, async () => check((await s.bash(MB_COMMAND)).output.length)),
      "docker exec per command (CLI)",
      await timed(ctx.runs, () => check(execFileSync("docker", [...cli, "sh", "-c", MB_COMMAND], { maxBuffer: 1 << 24 }).length)),
    );
    ctx.row(
      "shell round trip",
      "1 MB of output",
      null,
      "dockerode exec per command (API)",
      await timed(ctx.runs, async () => check((await s.box.exec(["sh", "-c", MB_COMMAND])).stdout.length)),
    );
    // The plain shell in a box of its own (each box has one CPU), the two run in turn, so load on
    // the machine falls on both alike.
    const other = await Session.create(ctx.engine, { repo: ctx.repo(10), image: ctx.image });
    const plain = await PtyShell.start({
      engine: ctx.engine,
      containerId: other.box.id,
      user: "1000",
      workdir: "/workspace",
      env: {},
      stopCommand: async () => ({ interrupted: 0, killed: 0, left: 0 }),
    });
    try {
      const run = {
        full: () => s.bash("true"),
        plain: () => plain.run("true", { timeoutMs: 10_000, maxOutputBytes: 1_000 }),
      };
      const samples = { full: [], plain: [] };
      // Three times the runs: the difference is a fraction of a millisecond.
      for (let i = 0; i < 3 + ctx.runs * 3; i++) {
        for (const name of i % 2 ? ["full", "plain"] : ["plain", "full"]) {
          const t = performance.now();
          await run[name]();
          if (i >= 3) samples[name].push(performance.now() - t);
        }
      }
      ctx.row(
        "shell round trip",
        "`true`, stderr apart and state saved",
        stats(samples.full),
        "the same shell without either",
        stats(samples.plain),
      );
    } finally {
      await plain.dispose();
      await other.destroy();
    }
  } finally {
    await s.destroy();
  }
}
