/**
 * The repository inside a box: copy in a snapshot of the host repository, record it as the base,
 * and take out the diff of everything that changed since. The diff is built with a private index
 * so the agent's own index, commits and branches in the box never change what comes out.
 */
import { Readable } from "node:stream";
import tar from "tar-stream";
import type { Box } from "../sandbox/box.js";
import { CommandExitError, InvalidArgumentError, LimitExceededError } from "../util/errors.js";
import { logger } from "../util/log.js";
import { DEFAULT_MAX_DIFF_BYTES } from "./diff-safety.js";
import { hostGit, openHostRepo, snapshotFileList, type HostRepo } from "./host-repo.js";
import { packSnapshot, type SnapshotStats } from "./snapshot-tar.js";

const log = logger("workspace");

/** Where the private index lives in the box; it keeps stat data so a diff only stats files. */
const DIFF_INDEX = "/tmp/.drydock-index";
export const BASE_REF = "refs/drydock/base";

export interface CopyInResult {
  repo: HostRepo;
  /** The commit in the box that the diff is taken against. */
  baseCommit: string;
  /** True when the snapshot held changes not committed on the host. */
  dirty: boolean;
  stats: SnapshotStats;
}

const RECORD_BASE = `
set -e
cd /workspace
export GIT_INDEX_FILE=${DIFF_INDEX}
if head=$(git rev-parse --verify -q HEAD); then git read-tree "$head"; else head=; rm -f "$GIT_INDEX_FILE"; fi
git add -A
tree=$(git write-tree)
if [ -n "$head" ] && [ "$tree" = "$(git rev-parse "$head^{tree}")" ]; then
  base=$head; dirty=0
else
  base=$(GIT_AUTHOR_DATE="$1" GIT_COMMITTER_DATE="$1" git commit-tree "$tree" \${head:+-p "$head"} -m "drydock: snapshot of the host working tree")
  dirty=1
fi
git update-ref ${BASE_REF} "$base"
git update-index -q --refresh >/dev/null 2>&1 || true
printf '%s %s' "$base" "$dirty"
`;

/** Streams a snapshot of the host repository into /workspace and records the base commit. */
export async function copyIn(box: Box, repoPath: string, ref?: string): Promise<CopyInResult> {
  const repo = await openHostRepo(repoPath);
  const commit = ref === undefined ? undefined : await resolveCommit(repo, ref);
  const files = await snapshotFileList(repo);
  const pack = tar.pack();
  const extracting = box.exec(["tar", "-x", "-f", "-", "-C", "/workspace"], {
    stdin: Readable.from(pack),
    timeoutMs: 600_000,
  });
  const [stats, extracted] = await Promise.all([packSnapshot(repo, files, pack), extracting]);
  if (extracted.exitCode !== 0) {
    throw new CommandExitError(
      extracted.exitCode,
      extracted.stderr.toString("utf8"),
      "copying the repository into the box",
    );
  }
  if (commit) {
    const checkout = await box.sh(
      'cd /workspace && git checkout -q --force --detach "$1" && git clean -q -fdx',
      [commit],
    );
    if (checkout.exitCode !== 0) {
      throw new CommandExitError(
        checkout.exitCode,
        checkout.stderr.toString("utf8"),
        `checking out ${ref} in the box`,
      );
    }
  }
  const recorded = await box.sh(RECORD_BASE, [new Date().toISOString()]);
  if (recorded.exitCode !== 0) {
    throw new CommandExitError(
      recorded.exitCode,
      recorded.stderr.toString("utf8"),
      "recording the base commit",
    );
  }
  const [baseCommit, dirty] = recorded.stdout.toString("utf8").trim().split(" ");
  log.debug(
    `box ${box.shortId}: ${stats.files} files, ${stats.bytes} bytes in; base ${baseCommit!.slice(0, 12)}`,
  );
  return { repo, baseCommit: baseCommit!, dirty: dirty === "1", stats };
}

async function resolveCommit(repo: HostRepo, ref: string): Promise<string> {
  if (ref.startsWith("-"))
    throw new InvalidArgumentError("ref", `${JSON.stringify(ref)} is not a commit-ish`);
  try {
    return (await hostGit(repo.root, ["rev-parse", "--verify", "-q", `${ref}^{commit}`]))
      .toString("utf8")
      .trim();
  } catch {
    throw new InvalidArgumentError(
      "ref",
      `${JSON.stringify(ref)} names no commit in ${repo.root}; give a branch, tag or commit id`,
    );
  }
}

const DIFF = `
set -e
cd /workspace
export GIT_INDEX_FILE=${DIFF_INDEX}
[ -f "$GIT_INDEX_FILE" ] || git read-tree ${BASE_REF}
git add -A >/dev/null 2>&1
# The box's git config must not change the diff's format (prefixes, external drivers, colour).
FLAGS="--no-ext-diff --no-textconv --no-color --src-prefix=a/ --dst-prefix=b/"
case "$1" in
  stat) git diff $FLAGS --cached --stat=200 ${BASE_REF} ;;
  names) git diff $FLAGS --cached --name-status -z -M ${BASE_REF} ;;
  *) git diff $FLAGS --cached --binary --full-index -M ${BASE_REF} ;;
esac
`;

export interface DiffOptions {
  maxBytes?: number;
  signal?: AbortSignal;
}

async function runDiff(box: Box, kind: "patch" | "stat" | "names", options: DiffOptions): Promise<Buffer> {
  const maxBytes = options.maxBytes ?? DEFAULT_MAX_DIFF_BYTES;
  const result = await box.sh(DIFF, [kind], { maxOutputBytes: maxBytes, signal: options.signal });
  if (result.exitCode !== 0) {
    throw new CommandExitError(
      result.exitCode,
      result.stderr.toString("utf8"),
      "taking the diff out of the box",
    );
  }
  if (result.truncated) {
    throw new LimitExceededError(
      `the diff is larger than ${maxBytes} bytes; remove generated or large files in the box (or add them to .gitignore) and try again`,
    );
  }
  return result.stdout;
}

/** The unified diff (binary-safe) of everything changed in /workspace since the base. */
/** As bytes: a file in another encoding must reach the host unchanged. */
export function diffOut(box: Box, options: DiffOptions = {}): Promise<Buffer> {
  return runDiff(box, "patch", options);
}

export async function diffStat(box: Box, options: DiffOptions = {}): Promise<string> {
  return (await runDiff(box, "stat", options)).toString("utf8");
}
