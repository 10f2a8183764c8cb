/**
 * How a session's diff reaches the host repository, the same for the session_apply tool, `drydock
 * run --apply` and `drydock sessions apply` (which has only the session's record, not the session).
 */
import { applyDiff, type ApplyMode, type ApplyResult } from "../workspace/apply-diff.js";

export interface SessionApplyTarget {
  id: string;
  /** The host repository's top directory. */
  repo: string;
  /** The host commit the diff applies to (branch mode needs it). */
  hostBaseCommit: string | undefined;
}

export interface SessionApplyOptions {
  mode?: ApplyMode;
  /** Branch mode: default `drydock/<session>`. */
  branch?: string;
  replaceBranch?: boolean;
  /** Branch mode: sit on the snapshot of the uncommitted work the session started from (apply-diff.ts). */
  includeUncommitted?: boolean;
  /** Worktree mode: apply a diff that removes or weakens ignore rules (refused by default). */
  allowIgnoreChanges?: boolean;
}

/** Applies `diff` to the session's repository: a new branch (default) or the working tree. */
export function applySessionDiff(
  target: SessionApplyTarget,
  diff: Uint8Array,
  options: SessionApplyOptions = {},
): Promise<ApplyResult> {
  return applyDiff(target.repo, diff, {
    mode: options.mode ?? "branch",
    branch: options.branch ?? `drydock/${target.id}`,
    replaceBranch: options.replaceBranch,
    includeUncommitted: options.includeUncommitted,
    allowIgnoreChanges: options.allowIgnoreChanges,
    baseCommit: target.hostBaseCommit,
    message: `drydock: changes from session ${target.id}`,
  });
}
