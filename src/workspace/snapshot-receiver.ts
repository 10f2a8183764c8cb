/**
 * The box end of a copy-in: one program started in the box before the snapshot exists, waiting on
 * its stdin. It reads a first line (the snapshot time, and the commit to detach at or "-"),
 * extracts the tar stream that follows into /workspace and records the base commit with a private
 * index, all in one exec. A warm box has its receiver started ahead of time, so a session that
 * takes it pays for no exec at all before the bytes flow.
 */
import { PassThrough, Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import type { ExecResult } from "../engine/exec.js";
import type { Box } from "../sandbox/box.js";

/** Where the private index lives in the box; it keeps stat data so a diff only stats files. */
export const DIFF_INDEX = "/tmp/.drydock-index";
export const BASE_REF = "refs/drydock/base";
/** Written by an environment build (images/environment/prepare.sh). */
const ENV_LINKS = "/opt/drydock/env/links.tar";
const ENV_EXCLUDE = "/opt/drydock/env/exclude";

const READY = "drydock-receiver-ready";
/** Left by a prefill: the box holds the served repository's commit (the file names it), its links laid already. */
export const PREFILLED_MARK = "/tmp/.drydock-prefilled";
/** Left by a prefill: the private index's entries as `git ls-files -v -s` lists them. */
const PREFILLED_LISTING = "/tmp/.drydock-prefilled-listing";

/**
 * How a receiver takes its snapshot (the third word of its first line):
 *   full     the whole snapshot, into an empty /workspace (the default);
 *   prefill  a commit's tree and `.git`, ahead of any session: the private index is built and its
 *            stat data made fresh, and nothing else (a warm box then waits with a second receiver);
 *   delta    into a prefilled box: first the paths to delete (NUL-separated, their byte count in
 *            the line's fourth word), then the paths sent (the same, fifth word), then only what
 *            differs from the prefilled commit; git looks at those paths alone;
 *   wipe     into a prefilled box that will not serve this snapshot (another repository, a ref):
 *            /workspace and the private index are emptied, then as full;
 *   git      only `.git`, into an empty /workspace (a prefilled one is emptied first): a fork's
 *            files come from its source's checkpoint, not from the host.
 */
export type ReceiveMode = "full" | "prefill" | "delta" | "wipe" | "git";

/** What the receiver says when HEAD's commit is not among the objects it was sent. */
const MISSING_HEAD =
  "HEAD's commit is not in the repository's own object store (it borrows objects from another, through objects/info/alternates, as a clone made with --shared or --reference does); run git repack -a -d in it to copy them in, then remove objects/info/alternates";

/**
 * Below these sizes (an index of about 600 entries, a working tree of 8 MiB) the agent's index is
 * refreshed by hashing its files: hashing so little costs less than the five processes of a rebuild.
 */
const SMALL_INDEX_BYTES = 64 * 1024;
const SMALL_TREE_BYTES = 8 * 1024 * 1024;

// The agent's index came from the host with the host's stat data, so every git command that reads
// it (git_diff, the agent's own git diff) would hash every file again until something rewrites it.
// The private index, just built, has this box's stat data: rebuilding the agent's index from its
// own tree on a copy of it (read-tree -m keeps the stat data of every entry whose content is the
// same) costs no hashing. The result is kept only when it lists the very same entries, stages and
// flags; otherwise (a conflict, an intent-to-add or skip-worktree entry) git refreshes the index
// itself, hashing what it must. A small index over a small tree is refreshed so straight away.
const FRESHEN_AGENT_INDEX = `
agent_index=$(unset GIT_INDEX_FILE; git rev-parse --git-path index)
if [ "$detach" = - ] && [ -f "$agent_index" ]; then
  listing() { GIT_INDEX_FILE=$1 git ls-files -v -s; }
  case "$agent_index" in /*) sized=$agent_index ;; *) sized=./$agent_index ;; esac
  # The working tree's bytes (what a refresh would hash) and the index's, from one du.
  tree_bytes= index_bytes=
  { read -r tree_bytes _ && read -r index_bytes _; } < <(du -s -b --exclude=.git . "$sized" 2>/dev/null) || :
  if [[ $tree_bytes =~ ^[0-9]+$ && $index_bytes =~ ^[0-9]+$ ]] &&
    [ "$index_bytes" -lt ${SMALL_INDEX_BYTES} ] && [ "$tree_bytes" -lt ${SMALL_TREE_BYTES} ]; then
    # A small index over few bytes: hashing its files costs less than the five processes below.
    GIT_INDEX_FILE=$agent_index git update-index -q --refresh >/dev/null 2>&1 || true
  elif tree=$(GIT_INDEX_FILE=$agent_index git write-tree 2>/dev/null) &&
    cp "$GIT_INDEX_FILE" "$agent_index.drydock" &&
    GIT_INDEX_FILE=$agent_index.drydock git read-tree -m "$tree" &&
    cmp -s <(listing "$agent_index") <(listing "$agent_index.drydock"); then
    mv -f "$agent_index.drydock" "$agent_index"
  else
    rm -f "$agent_index.drydock"
    GIT_INDEX_FILE=$agent_index git update-index -q --refresh >/dev/null 2>&1 || true
  fi
fi`;

// A delta into a prefilled box: outside the paths the host named, the working tree is the
// prefilled commit's, and the private index holds it with fresh stat data, so git looks at those
// paths alone (all of them again, were one to match nothing). The agent's index, when it lists what
// the prefill's did (the host staged nothing, HEAD is the same commit), is the prefill's: a cold
// copy-in makes one with the same entries. With nothing to send and HEAD unmoved, the base is HEAD.
const DELTA = `
  export GIT_INDEX_FILE=${DIFF_INDEX}
  # HEAD read as git reads it where it names the prefilled commit, detached or through a loose ref
  # (a loose ref wins over packed-refs): no process at a warm start. Only regular files are read (a
  # link could lead to a FIFO). Anything else (a packed ref, a ref naming another commit, a name
  # outside refs/, a link) is git's to resolve, as before.
  head= at=
  if [ -f .git/HEAD ] && [ ! -L .git/HEAD ]; then { IFS= read -r at < .git/HEAD; } 2>/dev/null || at=; fi
  case "$at" in
    "ref: refs/"*) ref=\${at#ref: }
      case "$ref" in
        (*..*|*//*|*/) ;;
        (*) if [ -f ".git/$ref" ] && [ ! -L ".git/$ref" ]; then { IFS= read -r head < ".git/$ref"; } 2>/dev/null || head=; fi ;;
      esac ;;
    *) head=$at ;;
  esac
  if [ -z "$prefilled" ] || [ "$head" != "$prefilled" ]; then head=$(git rev-parse --verify -q HEAD) || head=; fi
  fresh=0
  if [ "$index" = kept ]; then
    # The host sent no index: the one the prefill made is the agent's (or, were it gone, HEAD's
    # tree, which the host's index lists: its stat data is then made below).
    if [ -f .git/index ]; then fresh=1; else GIT_INDEX_FILE=.git/index git read-tree "$prefilled"; fi
  elif [ -f ${PREFILLED_LISTING} ] && GIT_INDEX_FILE=.git/index git ls-files -v -s 2>/dev/null | cmp -s - ${PREFILLED_LISTING}; then
    cp ${DIFF_INDEX} .git/index
    fresh=1
  fi
  if [ $((deletes + sent)) -gt 0 ]; then
    # 1: a path named is one the box's excludes ignore (drydock's own, an environment's); the rest
    # are added all the same. Any other failure (a path gone since, a full disk): everything again.
    added=0
    git --literal-pathspecs add -A --pathspec-from-file=/tmp/.drydock-deletes --pathspec-file-nul 2>/dev/null || added=$?
    if [ "$added" -gt 1 ]; then git add -A; fi
    rm -f /tmp/.drydock-deletes
  fi
  if [ $((deletes + sent)) -eq 0 ] && [ -n "$head" ] && [ "$head" = "$prefilled" ]; then
    base=$head; dirty=0
  else
    tree=$(git write-tree)
    if [ -n "$head" ] && [ "$tree" = "$(git rev-parse "$head^{tree}")" ]; then
      base=$head; dirty=0
    else
      base=$(GIT_AUTHOR_DATE="$stamp" GIT_COMMITTER_DATE="$stamp" git commit-tree "$tree" \${head:+-p "$head"} -m "drydock: snapshot of the host working tree")
      dirty=1
    fi
  fi
  # The base written as git writes a loose ref (the tar brings its directory): one process less at
  # every warm start. git update-ref where the file cannot be written (the host's refs hold a
  # directory by that name).
  { builtin printf '%s\\n' "$base" >| .git/${BASE_REF}; } 2>/dev/null || git update-ref ${BASE_REF} "$base"
  if [ "$fresh" = 0 ]; then
    detach=-
    ${FRESHEN_AGENT_INDEX}
  fi
  printf '%s %s %s' "$base" "$dirty" "$fresh"
  exit 0`;

const RECEIVE = `
set -e
# An environment image carries what its setup prepared in the repository (node_modules, built
# extensions): its links are laid down before the snapshot arrives (a warm box does it while it
# waits), and the repository's own files, extracted after, win over any of the same name. A
# prefilled box laid them before its prefill.
links() { if [ -f ${ENV_LINKS} ]; then tar -x -f ${ENV_LINKS} -C /workspace; fi; }
[ -e ${PREFILLED_MARK} ] || links
echo ${READY} >&2
IFS=' ' read -r stamp detach mode deletes sent index || exit 0
[ -n "$stamp" ] || exit 0
cd /workspace
case "\${mode:-full}" in
  full|prefill) ;;
  wipe)
    find /workspace -mindepth 1 -delete
    rm -f ${DIFF_INDEX} ${PREFILLED_MARK} ${PREFILLED_LISTING}
    links
    mode=full ;;
  git)
    if [ -e ${PREFILLED_MARK} ]; then
      find /workspace -mindepth 1 -delete
      rm -f ${DIFF_INDEX} ${PREFILLED_MARK} ${PREFILLED_LISTING}
      links
    fi
    tar -x -f - -C /workspace
    if [ -f ${ENV_EXCLUDE} ]; then mkdir -p .git/info && cat ${ENV_EXCLUDE} >> .git/info/exclude; fi
    printf 'git'
    exit 0 ;;
  delta)
    [ -e ${PREFILLED_MARK} ] || { echo "this box holds no prefilled snapshot" >&2; exit 3; }
    read -r prefilled < ${PREFILLED_MARK} || prefilled=
    case "$deletes" in (*[!0-9]*|'') echo "bad delete count" >&2; exit 3 ;; esac
    case "$sent" in (*[!0-9]*|'') echo "bad sent count" >&2; exit 3 ;; esac
    # Paths that are gone since the prefilled commit, before the files that may take their place.
    if [ "$deletes" -gt 0 ]; then
      head -c "$deletes" > /tmp/.drydock-deletes
      xargs -0 -r rm -rf -- < /tmp/.drydock-deletes
      # Directories left empty go too: git keeps none, and a cold copy has none.
      while IFS= read -r -d '' gone; do
        case "$gone" in (*/*) printf '%s\\0' "\${gone%/*}" ;; esac
      done < /tmp/.drydock-deletes | sort -zu |
        xargs -0 -r rmdir -p --ignore-fail-on-non-empty -- 2>/dev/null || true
    fi
    # Every path that differs from the prefilled commit: git looks at these and no other.
    if [ "$sent" -gt 0 ]; then head -c "$sent" >> /tmp/.drydock-deletes; fi
    # What names commits comes whole from the host: a ref deleted there is gone here too.
    # The agent's index stays when the host sends none ("kept": the host's index is one it knows
    # to list the prefilled commit's tree exactly): the prefill made it, with this box's stat data.
    if [ "$index" = kept ]; then agent_kept=; else agent_kept=.git/index; fi
    rm -rf .git/refs .git/packed-refs .git/HEAD $agent_kept .git/shallow ${PREFILLED_MARK} ;;
  *) echo "unknown mode" >&2; exit 3 ;;
esac
tar -x -f - -C /workspace
# The links' names are kept out of git's sight, and so out of every diff.
if [ -f ${ENV_EXCLUDE} ] && [ "$mode" != delta ]; then mkdir -p .git/info && cat ${ENV_EXCLUDE} >> .git/info/exclude; fi
if [ "$mode" = prefill ]; then
  # The commit's tree with this box's stat data: a session's copy-in then hashes only what differs.
  # Written a second after the files, so git does not take them for racily clean (a file changed
  # in the second the index was written looks unchanged by its stat data) and hash them all again.
  sleep 1
  GIT_INDEX_FILE=${DIFF_INDEX} git read-tree "$detach"
  GIT_INDEX_FILE=${DIFF_INDEX} git update-index -q --refresh >/dev/null 2>&1 || true
  GIT_INDEX_FILE=${DIFF_INDEX} git ls-files -v -s > ${PREFILLED_LISTING}
  # The agent's index for a session whose host index lists this commit's tree exactly (the host
  # then sends none): the same entries, with this box's stat data.
  cp ${DIFF_INDEX} .git/index
  printf '%s\\n' "$detach" > ${PREFILLED_MARK}
  printf 'prefilled'
  exit 0
fi
if [ "$mode" = delta ]; then
  if [ -f ${ENV_EXCLUDE} ]; then mkdir -p .git/info && cat ${ENV_EXCLUDE} >> .git/info/exclude; fi
  ${DELTA}
fi
if [ -e ${PREFILLED_MARK} ]; then rm -f ${PREFILLED_MARK}; fi
if [ "$detach" != - ]; then
  git read-tree "$detach"
fi
export GIT_INDEX_FILE=${DIFF_INDEX}
# HEAD and its tree from one git ("--": nothing after the two is read as a revision).
if revs=$(git rev-parse HEAD 'HEAD^{tree}' -- 2>/dev/null); then
  { read -r head; read -r head_tree; } <<<"$revs"
  git read-tree "$head"
elif git rev-parse --verify -q HEAD >/dev/null; then
  # HEAD names a commit whose objects did not come in: the host borrows them from another store.
  echo "${MISSING_HEAD}" >&2
  exit 4
else
  head= head_tree=
  rm -f "$GIT_INDEX_FILE"
fi
git add -A
tree=$(git write-tree)
if [ -n "$head" ] && [ "$tree" = "$head_tree" ]; then
  base=$head; dirty=0
else
  base=$(GIT_AUTHOR_DATE="$stamp" GIT_COMMITTER_DATE="$stamp" git commit-tree "$tree" \${head:+-p "$head"} -m "drydock: snapshot of the host working tree")
  dirty=1
fi
git update-ref ${BASE_REF} "$base"
git update-index -q --refresh >/dev/null 2>&1 || true
# On a ref the agent's index is the same tree with the same files: share the fresh stat data.
if [ "$detach" != - ]; then cp "$GIT_INDEX_FILE" .git/index; fi
${FRESHEN_AGENT_INDEX}
printf '%s %s' "$base" "$dirty"
`;

export class SnapshotReceiver {
  private used = false;

  private constructor(
    private readonly input: PassThrough,
    /** Settles when the program in the box ends: after a copy-in, or when the box goes away. */
    readonly result: Promise<ExecResult>,
    /** Resolves once the program runs in the box and waits for its input. */
    readonly ready: Promise<void>,
  ) {}

  /** Starts the receiving program; `timeoutMs` counts from now, waiting included (default 10 min). */
  static open(box: Box, options: { timeoutMs?: number } = {}): SnapshotReceiver {
    const input = new PassThrough();
    let started: () => void = () => undefined;
    const ready = new Promise<void>((resolve) => (started = resolve));
    let seen = "";
    const result = box.sh(RECEIVE, [], {
      stdin: input,
      timeoutMs: options.timeoutMs ?? 600_000,
      onStderr: (chunk) => {
        if (seen.length < READY.length) seen += chunk.toString("utf8");
        if (seen.startsWith(READY)) started();
      },
    });
    result.catch(() => undefined);
    // A program that ended is no longer starting: whoever waits on `ready` learns from `result`.
    void result.then(started, started);
    return new SnapshotReceiver(input, result, ready);
  }

  /**
   * Sends the first line and the tar stream; resolves with the program's result once it ends. A
   * failure to produce the stream is thrown as it is; a program that ends early (a full
   * workspace) stops the sending.
   */
  async receive(
    stamp: string,
    detach: string | undefined,
    tarStream: AsyncIterable<Buffer>,
    options: {
      mode?: ReceiveMode;
      deletes?: readonly string[];
      /** For a delta: the working-tree paths the tar stream may hold (git looks at no other). */
      sent?: readonly string[];
      /**
       * For a delta: the stream holds no `.git/index`, as the host's lists the prefilled commit's
       * tree exactly: the agent's index is the one the prefill made.
       */
      indexKept?: boolean;
    } = {},
  ): Promise<ExecResult> {
    if (this.used) throw new Error("a snapshot receiver takes one snapshot");
    this.used = true;
    const nul = (paths: readonly string[] | undefined) =>
      Buffer.from((paths ?? []).map((path) => `${path}\0`).join(""), "utf8");
    const deletes = nul(options.deletes);
    const sent = nul(options.sent);
    const mode = options.mode ?? "full";
    async function* all() {
      const index = options.indexKept ? "kept" : "sent";
      yield Buffer.from(`${stamp} ${detach ?? "-"} ${mode} ${deletes.length} ${sent.length} ${index}\n`);
      if (deletes.length > 0) yield deletes;
      if (sent.length > 0) yield sent;
      yield* tarStream;
    }
    let sendError: unknown;
    // pipeline destroys the input with the error, which ends the exec: the program cannot wait on.
    const sending = pipeline(Readable.from(all()), this.input).catch((error: unknown) => {
      sendError ??= error;
    });
    let result: ExecResult;
    try {
      result = await this.result;
    } catch (error) {
      throw sendError ?? error;
    } finally {
      this.input.destroy();
      await sending;
    }
    // A program that failed says why (a full workspace, a broken archive) on its stderr.
    if (result.exitCode === 0 && sendError !== undefined) throw sendError;
    const marker = Buffer.from(`${READY}\n`);
    const stderr = result.stderr.subarray(0, marker.length).equals(marker)
      ? result.stderr.subarray(marker.length)
      : result.stderr;
    return { ...result, stderr };
  }

  /** Ends the input without a snapshot: the program exits and nothing is written. */
  close(): void {
    this.used = true;
    this.input.end();
  }
}
