import type { Command } from "commander";
import { Engine } from "../engine/engine.js";
import { EnvironmentImages } from "../environment/environment-images.js";
import { defaultSandboxImage } from "../sandbox/sandbox-image.js";
import { SessionManager } from "../session/session-manager.js";

interface RunOptions {
  repo: string;
  image?: string;
  apply?: boolean;
  worktree?: boolean;
  branch?: string;
  timeout: string;
  network?: string;
  diff: boolean;
  env: boolean;
}

export function registerRunCommand(program: Command): void {
  program
    .command("run")
    .description(
      "one shot: copy a repository into a new box, run a command in its shell, print the output and the diff, remove the box",
    )
    .option("--repo <path>", "repository to copy in", process.cwd())
    .option(
      "--image <image>",
      "sandbox image, and the base of the repository's environment (default: the one `drydock image build` made)",
    )
    .option("--no-env", "ignore the repository's environment definition: use the sandbox image as it is")
    .option("--apply", "apply the diff to the host repository as a new branch drydock/<session>")
    .option("--worktree", "with --apply: apply into the working tree instead of a branch")
    .option("--branch <name>", "with --apply: the branch to create")
    .option("--timeout <seconds>", "time limit of the command", "600")
    .option("--network <name>", "relaxation: a Docker network for the box (default: none)")
    .option("--no-diff", "do not print the diff")
    .argument("<command...>", "the command, after --")
    .action(async (words: string[], opts: RunOptions) => {
      const timeoutS = Number(opts.timeout);
      if (!Number.isFinite(timeoutS) || timeoutS <= 0)
        throw new Error(`--timeout: ${opts.timeout} is not a positive number of seconds`);
      const engine = await Engine.connect();
      const manager = await SessionManager.start(engine);
      const stop = () => void manager.closeAll().finally(() => process.exit(130));
      process.once("SIGINT", stop);
      process.once("SIGTERM", stop);
      try {
        const session = await manager.create({
          repo: opts.repo,
          image: await runImage(engine, opts),
          network: opts.network,
        });
        const result = await session.bash(words.join(" "), {
          timeoutMs: timeoutS * 1000,
          onOutput: (text) => process.stderr.write(text),
        });
        if (result.note) process.stderr.write(`\n[drydock] ${result.note}\n`);
        const diff = await session.diff();
        if (opts.diff) process.stdout.write(diff);
        if (opts.apply && diff.trim()) {
          const applied = await session.apply({
            mode: opts.worktree ? "worktree" : "branch",
            branch: opts.branch,
          });
          process.stderr.write(
            applied.mode === "branch"
              ? `[drydock] applied as ${applied.branch} (${applied.commit?.slice(0, 12)}) in ${session.repo.root}; your working tree is untouched\n`
              : `[drydock] applied to the working tree of ${session.repo.root}\n`,
          );
        } else if (opts.apply) process.stderr.write("[drydock] nothing changed; nothing to apply\n");
        process.exitCode = result.exitCode ?? (result.timedOut ? 124 : 1);
      } finally {
        await manager.closeAll();
      }
    });
}

/** The repository's environment image (built first when missing, progress on stderr), or the sandbox image. */
async function runImage(engine: Engine, opts: RunOptions): Promise<string> {
  const baseImage = opts.image ?? (await defaultSandboxImage(engine));
  if (!opts.env) return baseImage;
  const started = Date.now();
  const status = await new EnvironmentImages(engine, { baseImage }).imageFor({
    repo: opts.repo,
    onLine: (line) => process.stderr.write(`[drydock env ${Math.round((Date.now() - started) / 1000)}s] ${line}\n`),
  });
  return status.image;
}
