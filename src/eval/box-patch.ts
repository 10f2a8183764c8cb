/**
 * Applies a patch inside the box with the fallbacks SWE-bench users know: `git apply`, then
 * `git apply --3way`, then `patch --fuzz=3 -p1`. A failed try is undone before the next, so a
 * half-applied patch never stays. Nothing runs on the host.
 */
import type { Box } from "../sandbox/box.js";
import { EVAL_DIR_IN_BOX } from "./box-tree.js";

export interface PatchApplied {
  applied: boolean;
  /** Which try worked: "git apply", "git apply --3way" or "patch --fuzz=3". */
  method?: string;
  /** Every try's output, for the agent log. */
  log: string;
}

const APPLY = `
cd /workspace
p=$1
export GIT_AUTHOR_NAME=drydock GIT_AUTHOR_EMAIL=drydock@localhost GIT_COMMITTER_NAME=drydock GIT_COMMITTER_EMAIL=drydock@localhost
say() { printf '$ %s\\n' "$*"; }
say git apply --verbose
if git apply --verbose --whitespace=nowarn "$p" 2>&1; then echo "@@method git apply"; exit 0; fi
# --3way records what it does in the index; keep the tree as it was to undo a failed try.
saved=$(git stash create 2>/dev/null || true)
say git apply --3way
if git apply --3way --whitespace=nowarn "$p" 2>&1; then
  git reset -q 2>/dev/null || true
  echo "@@method git apply --3way"; exit 0
fi
git reset -q --hard
[ -z "$saved" ] || git stash apply -q "$saved" >/dev/null 2>&1 || true
say patch --batch --fuzz=3 -p1
if patch --dry-run --batch --fuzz=3 -p1 -i "$p" >/dev/null 2>&1 && patch --batch --fuzz=3 -p1 --no-backup-if-mismatch -i "$p" 2>&1; then
  echo "@@method patch --fuzz=3"; exit 0
fi
patch --dry-run --batch --fuzz=3 -p1 -i "$p" 2>&1 || true
exit 1
`;

/** Writes the patch into the box and applies it; `name` keeps several patches apart. */
export async function applyPatchInBox(
  box: Box,
  patch: string,
  name: string,
  signal?: AbortSignal,
): Promise<PatchApplied> {
  if (patch.trim() === "")
    return { applied: true, method: "nothing (empty patch)", log: "empty patch: nothing to apply\n" };
  const git = gitDirPaths(patch);
  if (git.length > 0) {
    return {
      applied: false,
      log: `refused: the patch changes git's own files (${git.slice(0, 5).join(", ")}); a patch changes the repository's files only\n`,
    };
  }
  const path = `${EVAL_DIR_IN_BOX}/${name}.patch`;
  const text = patch.endsWith("\n") ? patch : `${patch}\n`;
  const write = await box.sh('mkdir -p "$(dirname "$1")" && cat > "$1"', [path], { stdin: text, signal });
  if (write.exitCode !== 0) {
    return {
      applied: false,
      log: `could not write the patch into the box: ${write.stderr.toString("utf8")}`,
    };
  }
  const result = await box.sh(APPLY, [path], { timeoutMs: 300_000, signal });
  const output = result.stdout.toString("utf8") + result.stderr.toString("utf8");
  const method = /^@@method (.+)$/m.exec(output)?.[1];
  const log = output.replace(/^@@method .+\n?/m, "");
  return result.exitCode === 0 && method ? { applied: true, method, log } : { applied: false, log };
}

/**
 * The paths in a patch's headers (git's and plain unified diff's) that lie in a `.git` directory:
 * git apply refuses them, but `patch` would write them (an ignore rule that hides a file from the
 * diff, a hook). Pure.
 */
export function gitDirPaths(patch: string): string[] {
  const found = new Set<string>();
  const header =
    /^(?:diff --git (\S+) (\S+)|(?:---|\+\+\+) (\S+)|rename (?:from|to) (.+)|copy (?:from|to) (.+))$/gm;
  for (const m of patch.matchAll(header)) {
    for (const raw of m.slice(1)) {
      if (raw === undefined || raw === "/dev/null") continue;
      const path = raw.replace(/^"|"$/g, "");
      if (path.split("/").some((part) => part.toLowerCase() === ".git"))
        found.add(path.replace(/^[ab]\//, ""));
    }
  }
  return [...found];
}
