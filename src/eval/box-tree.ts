/**
 * The working tree in the box as a git tree, recorded with a private index after setup, so the
 * agent's patch is exactly what changed since (setup's own changes left out), whatever the agent
 * does to the index, HEAD or branches.
 */
import type { Box } from "../sandbox/box.js";
import { CommandExitError, LimitExceededError } from "../util/errors.js";

export const EVAL_DIR_IN_BOX = "/tmp/drydock-eval";
const INDEX = `${EVAL_DIR_IN_BOX}/tree.index`;
const EXCLUDE = `${EVAL_DIR_IN_BOX}/exclude`;
const MAX_DIFF_BYTES = 32 * 1024 * 1024;

const RECORD = `
set -e
mkdir -p ${EVAL_DIR_IN_BOX}
cd /workspace
git_dir=$(git rev-parse --git-dir)
mkdir -p "$git_dir/info"
# aider's caches and history files never belong to a patch.
grep -qxF '.aider*' "$git_dir/info/exclude" 2>/dev/null || printf '.aider*\\n' >> "$git_dir/info/exclude"
# The ignore rules as they are now; the diff is taken under these, whatever the agent writes there.
cp "$git_dir/info/exclude" ${EXCLUDE}
export GIT_INDEX_FILE=${INDEX}
git -c core.excludesFile=/dev/null add -A >/dev/null
git write-tree
`;

const DIFF = `
set -e
cd /workspace
git_dir=$(git rev-parse --git-dir)
# A file the agent listed in .git/info/exclude (or in a global ignore file) would be left out of
# the diff; the rules recorded before the agent ran are put back first.
mkdir -p "$git_dir/info" && cp ${EXCLUDE} "$git_dir/info/exclude"
export GIT_INDEX_FILE=${INDEX}
git -c core.excludesFile=/dev/null add -A >/dev/null
after=$(git write-tree)
git diff --no-color --no-ext-diff --no-textconv --binary --full-index --src-prefix=a/ --dst-prefix=b/ "$1" "$after"
`;

/** Records the working tree; returns its tree id. */
export async function recordTree(box: Box, signal?: AbortSignal): Promise<string> {
  const result = await box.sh(RECORD, [], { timeoutMs: 300_000, signal });
  if (result.exitCode !== 0) {
    throw new CommandExitError(result.exitCode, result.stderr.toString("utf8"), "recording the workspace");
  }
  return result.stdout.toString("utf8").trim();
}

/** The binary-safe diff from a recorded tree to the working tree now. */
export async function diffSince(box: Box, tree: string, signal?: AbortSignal): Promise<string> {
  const result = await box.sh(DIFF, [tree], { timeoutMs: 300_000, maxOutputBytes: MAX_DIFF_BYTES, signal });
  if (result.exitCode !== 0) {
    throw new CommandExitError(result.exitCode, result.stderr.toString("utf8"), "taking the agent's diff");
  }
  if (result.truncated)
    throw new LimitExceededError(`the agent's diff is larger than ${MAX_DIFF_BYTES} bytes`);
  return result.stdout.toString("utf8");
}

/** Every file of a recorded tree (paths relative to the workspace). */
export async function treeFiles(box: Box, tree: string, signal?: AbortSignal): Promise<Set<string>> {
  const result = await box.sh('cd /workspace && git ls-tree -r -z --name-only "$1"', [tree], {
    timeoutMs: 120_000,
    maxOutputBytes: MAX_DIFF_BYTES,
    signal,
  });
  if (result.exitCode !== 0 || result.truncated) {
    throw new CommandExitError(
      result.exitCode,
      result.stderr.toString("utf8"),
      "listing the workspace's files",
    );
  }
  return new Set(
    result.stdout
      .toString("utf8")
      .split("\0")
      .filter((p) => p !== ""),
  );
}
