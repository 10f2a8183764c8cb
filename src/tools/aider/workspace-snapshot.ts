/**
 * Before and after an aider call: record the working tree (tracked and untracked files, not
 * ignored ones) as a git tree with a private index, so the diff shows exactly what the call
 * changed, whatever the agent did before; afterwards, undo changes to files that were not
 * editable and take the diff. The agent's index, HEAD and branches are never touched.
 */
import type { Box } from "../../sandbox/box.js";
import { isInWorkspace, relativeToWorkspace } from "../../sandbox/workspace-path.js";
import { CommandExitError, LimitExceededError, PathOutsideWorkspaceError } from "../../util/errors.js";

/** Where aider's history files and the snapshot index live in the box (tmpfs, outside the repository). */
export const AIDER_RUN_DIR = "/tmp/drydock-aider";
const INDEX = `${AIDER_RUN_DIR}/snapshot.index`;
const MAX_DIFF_BYTES = 20 * 1024 * 1024;

const PREPARE = `
set -e
cd /workspace
mkdir -p ${AIDER_RUN_DIR}
if ! git rev-parse --is-inside-work-tree >/dev/null 2>&1; then echo "/workspace is not a git repository" >&2; exit 3; fi
git_dir=$(git rev-parse --git-dir)
mkdir -p "$git_dir/info"
# aider's tag cache and history files stay out of every status and diff.
grep -qxF '.aider*' "$git_dir/info/exclude" 2>/dev/null || printf '.aider*\\n' >> "$git_dir/info/exclude"
export GIT_INDEX_FILE=${INDEX}
git add -A >/dev/null
git write-tree
[ $# -eq 0 ] || realpath -m -z -- "$@"
`;

const FINISH = `
set -e
cd /workspace
export GIT_INDEX_FILE=${INDEX}
before=$1; shift
git add -A >/dev/null
after=$(git write-tree)
reverted=()
while IFS= read -r -d '' path; do
  for allowed in "$@"; do [ "$allowed" = "$path" ] && continue 2; done
  if git cat-file -e "$before:$path" 2>/dev/null; then
    git --literal-pathspecs restore --source="$before" --worktree -- "$path"
  else
    rm -f -- "$path"
  fi
  reverted+=("$path")
done < <(git diff -z --name-only --no-renames "$before" "$after")
if [ \${#reverted[@]} -gt 0 ]; then git add -A >/dev/null; after=$(git write-tree); fi
printf '%s\\0' "\${#reverted[@]}"
[ \${#reverted[@]} -eq 0 ] || printf '%s\\0' "\${reverted[@]}"
git diff --no-color --no-ext-diff --no-textconv "$before" "$after"
`;

export interface WorkspaceSnapshot {
  /** The git tree of /workspace before the call. */
  tree: string;
  /** Each given path as the box resolves it (symlinks followed), relative to /workspace. */
  resolved: string[];
}

/** Records the working tree and resolves `paths` (relative to /workspace) in the box. */
export async function snapshotWorkspace(
  box: Box,
  paths: readonly string[],
  signal?: AbortSignal,
): Promise<WorkspaceSnapshot> {
  const result = await box.sh(PREPARE, [...paths], { timeoutMs: 120_000, signal });
  if (result.exitCode !== 0) {
    throw new CommandExitError(
      result.exitCode,
      result.stderr.toString("utf8"),
      "recording the workspace before aider",
    );
  }
  const out = result.stdout.toString("utf8");
  const newline = out.indexOf("\n");
  const tree = out.slice(0, newline).trim();
  const real = out
    .slice(newline + 1)
    .split("\0")
    .slice(0, paths.length);
  const resolved = real.map((absolute, i) => {
    if (!isInWorkspace(absolute)) {
      throw new PathOutsideWorkspaceError(
        paths[i] ?? absolute,
        `it leads to ${absolute}, outside /workspace`,
      );
    }
    return relativeToWorkspace(absolute);
  });
  return { tree, resolved };
}

export interface WorkspaceChanges {
  /** `git diff` of the editable files from the snapshot to now. */
  diff: string;
  /** Files changed though not allowed; their changes were undone. */
  reverted: string[];
}

/** Undoes changes to files not in `allowed` (relative paths) and returns the diff since `before`. */
export async function finishWorkspace(
  box: Box,
  before: string,
  allowed: readonly string[],
): Promise<WorkspaceChanges> {
  const result = await box.sh(FINISH, [before, ...allowed], {
    timeoutMs: 120_000,
    maxOutputBytes: MAX_DIFF_BYTES,
  });
  if (result.exitCode !== 0) {
    throw new CommandExitError(
      result.exitCode,
      result.stderr.toString("utf8"),
      "taking the diff of aider's changes",
    );
  }
  if (result.truncated) {
    throw new LimitExceededError(
      `aider's diff is larger than ${MAX_DIFF_BYTES} bytes; it stays in the box: look at it with session_diff or bash`,
    );
  }
  return parseFinish(result.stdout);
}

/** Reads FINISH's output: a count, that many NUL-terminated paths, then the diff. */
export function parseFinish(stdout: Buffer): WorkspaceChanges {
  let at = stdout.indexOf(0);
  const count = Number(stdout.subarray(0, at).toString("utf8"));
  const reverted: string[] = [];
  for (let i = 0; i < count; i++) {
    const end = stdout.indexOf(0, at + 1);
    reverted.push(stdout.subarray(at + 1, end).toString("utf8"));
    at = end;
  }
  return { reverted, diff: stdout.subarray(at + 1).toString("utf8") };
}
