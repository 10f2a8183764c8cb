/**
 * `drydock run`'s flags, checked before a box is made: each refusal names the flag and the fix,
 * exit 2.
 */
import type { BoxEngine } from "../engine/box-engine.js";
import { dockerEngine } from "../engine/connect-engine.js";
import { FlagError } from "../util/errors.js";
import { branchFlag, imageFlag, networkFlag, repoFlag } from "./flag-checks.js";
import { seconds } from "./flag-values.js";
import { runtimeFlag } from "./runtime-flag.js";
import type { BoxRuntime } from "../sandbox/box-runtime.js";

export interface RunFlags {
  repo: string;
  image?: string;
  apply?: boolean;
  applyOnFailure?: boolean;
  worktree?: boolean;
  allowIgnoreChanges?: boolean;
  branch?: string;
  timeout: string;
  network?: string;
  runtime?: string;
}

/** Checks the flags against `engine`, the backend `--engine` named (a Docker engine by default). */
export async function checkRunFlags(
  flags: RunFlags,
  engine: BoxEngine,
): Promise<{ timeoutMs: number; runtime: BoxRuntime }> {
  const timeoutMs = seconds(flags.timeout, "--timeout")! * 1000;
  for (const [flag, given] of [
    ["--worktree", flags.worktree],
    ["--branch", flags.branch !== undefined],
    ["--apply-on-failure", flags.applyOnFailure],
    ["--allow-ignore-changes", flags.allowIgnoreChanges],
  ] as const) {
    if (given && !flags.apply)
      throw new FlagError(flag, "works with --apply only; add --apply, or leave it out");
  }
  if (flags.worktree && flags.branch !== undefined) {
    throw new FlagError(
      "--branch",
      "names the branch --apply makes, and --worktree makes none (it changes your working tree); give one of the two",
    );
  }
  const repo = await repoFlag(flags.repo, "--repo");
  if (flags.branch !== undefined) await branchFlag(repo.root, flags.branch);
  await imageFlag(engine, flags.image);
  const docker = dockerEngine(engine);
  if (docker) await networkFlag(docker, flags.network);
  else if (flags.network !== undefined && flags.network !== "none") {
    throw new FlagError(
      "--network",
      `boxes on ${engine.name} have no network but what their NetworkPolicy allows, and a Docker network is not one; leave --network out`,
    );
  }
  const runtime = await runtimeFlag(engine, flags.runtime, flags.network);
  return { timeoutMs, runtime };
}
