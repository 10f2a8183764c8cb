/**
 * `drydock run`'s flags, checked before a box is made: each refusal names the flag and the fix,
 * exit 2.
 */
import { Engine } from "../engine/engine.js";
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

export async function checkRunFlags(flags: RunFlags): Promise<{ timeoutMs: number; runtime: BoxRuntime }> {
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
  const engine = await Engine.connect();
  await imageFlag(engine, flags.image);
  await networkFlag(engine, flags.network);
  const runtime = await runtimeFlag(engine, flags.runtime, flags.network);
  return { timeoutMs, runtime };
}
