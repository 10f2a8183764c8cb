// Shell round trip through the persistent shell, against a `docker exec` per command (CLI) and a
// dockerode exec per command (API), for `true` and for a command printing 1 MB.
import { execFileSync } from "node:child_process";
import { timed } from "./lib/stats.mjs";

const MB_COMMAND = "yes 'drydock benchmark output: a line of text, seventy bytes or so long' | head -c 1000000";

export async function shellRoundTrip(ctx) {
  const { Session } = await import("../dist/session/session.js");
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
  } finally {
    await s.destroy();
  }
}
