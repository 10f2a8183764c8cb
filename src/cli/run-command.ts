import {
  INCLUDE_UNTRACKED_DEPENDENCIES_FLAG,
  INCLUDE_UNTRACKED_DEPENDENCIES_HELP,
} from "./untracked-dependencies-flag.js";
import type { Command } from "commander";
import { ALLOW_BASE_IMAGE_HELP, checkAllowBaseImages, collectBaseImage } from "./base-image-flag.js";
import { PULL_HELP, checkPullFlag } from "./pull-flag.js";
import { closeEngine, connectEngine, dockerEngine, ENGINE_HELP } from "../engine/connect-engine.js";
import type { Engine } from "../engine/engine.js";
import { EnvironmentImages } from "../environment/environment-images.js";
import { sandboxImagePresent } from "../environment/image-pulls.js";
import { clusterSandboxImage, readySandboxImage } from "../sandbox/sandbox-image.js";
import { SessionManager } from "../session/session-manager.js";
import { collectEgress, EGRESS_ALLOW_PRIVATE_HELP, EGRESS_HELP, egressFlags } from "./egress-flags.js";
import { runCommandLine } from "./run-command-line.js";
import { checkRunFlags, type RunFlags } from "./run-flags.js";
import { RUNTIME_HELP } from "./runtime-flag.js";
import { diffOut, printErr, rawErr, rawOut } from "./terminal-out.js";

interface RunOptions extends RunFlags {
  engine?: string;
  diff: boolean;
  includeUntrackedDependencies?: boolean;
  env: boolean;
  egress: string[];
  egressAllowPrivate: string[];
  caCert?: string;
  allowBaseImage?: string[];
  pull?: string;
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
    .option(
      "--apply",
      "when the command succeeds, apply the diff to the host repository as a new branch drydock/<session>",
    )
    .option("--apply-on-failure", "with --apply: apply the diff even when the command fails")
    .option("--worktree", "with --apply: apply into the working tree instead of a branch")
    .option(
      "--allow-ignore-changes",
      "with --apply --worktree: apply a diff that removes or weakens .gitignore rules (refused by default)",
    )
    .option("--branch <name>", "with --apply: the branch to create")
    .option("--timeout <seconds>", "time limit of the command", "600")
    .option("--engine <url>", ENGINE_HELP)
    .option("--network <name>", "relaxation: a Docker network for the box (default: none)")
    .option("--egress <hosts>", EGRESS_HELP, collectEgress, [] as string[])
    .option("--egress-allow-private <cidr>", EGRESS_ALLOW_PRIVATE_HELP, collectEgress, [] as string[])
    .option("--runtime <name>", RUNTIME_HELP)
    .option(
      "--ca-cert <path>",
      "CA bundle the environment build and a box with --egress trust (default: SSL_CERT_FILE / the system bundle)",
    )
    .option("--allow-base-image <ref>", ALLOW_BASE_IMAGE_HELP, collectBaseImage, [] as string[])
    .option("--pull <when>", PULL_HELP, "missing")
    .option(INCLUDE_UNTRACKED_DEPENDENCIES_FLAG, INCLUDE_UNTRACKED_DEPENDENCIES_HELP)
    .option("--no-diff", "do not print the diff")
    .argument(
      "<command...>",
      "after --: one word is a shell line ('make && make test'); several are a program and its arguments",
    )
    .action(async (words: string[], opts: RunOptions) => {
      checkAllowBaseImages(opts.allowBaseImage);
      checkPullFlag(opts.pull);
      const egress = await egressFlags(opts.egress, opts.caCert, opts.network, opts.egressAllowPrivate);
      const engine = await connectEngine(opts.engine, { field: "--engine" });
      let manager: SessionManager | undefined;
      const stop = () =>
        void (manager?.closeAll() ?? Promise.resolve())
          .then(() => closeEngine(engine))
          .finally(() => process.exit(130));
      process.once("SIGINT", stop);
      process.once("SIGTERM", stop);
      try {
        const { timeoutMs, runtime } = await checkRunFlags(opts, engine);
        const docker = dockerEngine(engine);
        // On a cluster: the image the nodes have (--image, else drydock's sandbox image), and no
        // environment build (images are built on a Docker engine and pushed; docs/kubernetes.md).
        const image = docker ? await runImage(docker, opts) : (opts.image ?? (await clusterSandboxImage()));
        if (!docker && opts.env) {
          printErr(
            `[drydock] boxes on ${engine.name} use ${image} as it is: environments are built on a Docker engine (drydock env build) and pushed where the nodes pull\n`,
          );
        }
        manager = await SessionManager.start(engine);
        const session = await manager.create({
          repo: opts.repo,
          image,
          network: opts.network,
          runtime,
          includeUntrackedDependencies: opts.includeUntrackedDependencies === true,
          ...egress,
        });
        // The command's output goes where nothing else is printed: stderr when the diff takes
        // stdout, stdout with --no-diff (so `drydock run --no-diff -- cmd | jq` reads it).
        const output = opts.diff ? rawErr : rawOut;
        const result = await session.bash(runCommandLine(words), {
          timeoutMs,
          onOutput: (text) => output.write(text),
        });
        if (result.note) printErr(`\n[drydock] ${result.note}\n`);
        const diff = await session.diff();
        if (opts.diff) diffOut.write(diff);
        const exitCode = result.exitCode ?? (result.timedOut ? 124 : 1);
        if (opts.apply && exitCode !== 0 && !opts.applyOnFailure) {
          printErr(
            `[drydock] the command failed (${result.timedOut ? "timed out" : `exit ${exitCode}`}); nothing applied (--apply-on-failure applies anyway)\n`,
          );
        } else if (opts.apply && diff.trim()) {
          const applied = await session.apply({
            mode: opts.worktree ? "worktree" : "branch",
            branch: opts.branch,
            allowIgnoreChanges: opts.allowIgnoreChanges,
          });
          for (const warning of applied.warnings ?? []) printErr(`[drydock] warning: ${warning}\n`);
          printErr(
            applied.mode === "branch"
              ? `[drydock] applied as ${applied.branch} (${applied.commit?.slice(0, 12)}) in ${session.repo.root}; your working tree is untouched\n`
              : `[drydock] applied to the working tree of ${session.repo.root}\n`,
          );
        } else if (opts.apply) printErr("[drydock] nothing changed; nothing to apply\n");
        process.exitCode = exitCode;
      } finally {
        await manager?.closeAll();
        await closeEngine(engine);
      }
    });
}

/** The repository's environment image (built first when missing, progress on stderr), or the sandbox image. */
async function runImage(engine: Engine, opts: RunOptions): Promise<string> {
  const baseImage = opts.image ?? (await readySandboxImage(engine));
  await sandboxImagePresent(engine, baseImage, checkPullFlag(opts.pull), (line) =>
    printErr(`[drydock] ${line}\n`),
  );
  if (!opts.env) return baseImage;
  const started = Date.now();
  const status = await new EnvironmentImages(engine, {
    baseImage,
    caCert: opts.caCert,
    allowBaseImages: opts.allowBaseImage,
    pull: checkPullFlag(opts.pull),
  }).imageFor({
    repo: opts.repo,
    onLine: (line) => printErr(`[drydock env ${Math.round((Date.now() - started) / 1000)}s] ${line}\n`),
  });
  return status.image;
}
