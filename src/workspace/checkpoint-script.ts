/**
 * The bash that saves, restores, exports and imports a workspace's checkpoints inside its box.
 * Pure text: the box runs it, the host reads back only short, checked lines.
 *
 * A checkpoint is one commit K under refs/drydock/checkpoints/<slot>, its parent the session's
 * base, its tree holding:
 *   w  the working tree (every file not ignored, or every file with include_ignored), written
 *      with a private index, so the agent's index never changes;
 *   i  the agent's index file, byte for byte (absent when there is none);
 *   h  what HEAD is: "ref: refs/heads/x" or a commit id;
 *   r  every ref but drydock's own, one "<object> <name>" a line.
 * The objects the refs name are kept alive by refs/drydock/keep/<slot>/<n>, so git never prunes
 * them, and a fork can send them. Only what differs from the base is new in git's store: the cost
 * follows the change, not the repository.
 */
import { BASE_REF, DIFF_INDEX, PREFILLED_MARK } from "./snapshot-receiver.js";

export const CHECKPOINT_REFS = "refs/drydock/checkpoints";
export const KEEP_REFS = "refs/drydock/keep";
/** A restore's and an include_ignored checkpoint's own index: the diff's index is not theirs to spoil. */
const WORK_INDEX = "/tmp/.drydock-checkpoint-index";

export const CHECKPOINT_SCRIPT = `
set -e -o pipefail
cd /workspace
export GIT_AUTHOR_NAME=drydock GIT_AUTHOR_EMAIL=drydock@localhost GIT_COMMITTER_NAME=drydock GIT_COMMITTER_EMAIL=drydock@localhost
export GIT_TERMINAL_PROMPT=0 LC_ALL=C
op=$1 slot=$2
case "$slot" in (*[!0-9a-f]*|'') echo "bad slot" >&2; exit 2 ;; esac
# A fork's new box has no base until its import brings one.
case "$op" in
  import|tips) base= ;;
  *) base=$(git rev-parse --verify -q "${BASE_REF}^{commit}") || { echo "the session's base is gone" >&2; exit 5; } ;;
esac

# The working tree as a tree object, with the diff's index (stat data fresh: only changed files are
# read) or, to include ignored files, a copy of it.
worktree_tree() {
  if [ "$1" = 1 ]; then
    rm -f ${WORK_INDEX}
    if [ -f ${DIFF_INDEX} ]; then cp -p ${DIFF_INDEX} ${WORK_INDEX}; fi
    export GIT_INDEX_FILE=${WORK_INDEX}
  else
    export GIT_INDEX_FILE=${DIFF_INDEX}
  fi
  [ -f "$GIT_INDEX_FILE" ] || git read-tree "$base"
  if [ "$1" = 1 ]; then git add -A -f >/dev/null; else git add -A >/dev/null; fi
  git write-tree
  unset GIT_INDEX_FILE
}

# Every ref but drydock's own and symbolic ones (origin/HEAD follows its target).
list_refs() {
  git for-each-ref --format='%(objectname) %(refname) %(symref)' | while read -r sha ref sym; do
    case "$ref" in refs/drydock/*) continue ;; esac
    [ -z "$sym" ] || continue
    printf '%s %s\\n' "$sha" "$ref"
  done
}

save() {
  all=$3 max=$4
  w=$(worktree_tree "$all")
  agent_index=$(git rev-parse --git-path index)
  refs=$(list_refs)
  # The refs, HEAD, the agent's index and its time, hashed by one git: r, h, i, m.
  parts=$(mktemp -d /tmp/.drydock-checkpoint-XXXXXX)
  printf '%s' "$refs" >"$parts/r"
  if head=$(git symbolic-ref -q HEAD); then printf 'ref: %s' "$head" >"$parts/h"
  else git rev-parse --verify -q HEAD | tr -d '\\n' >"$parts/h"; fi
  hashed=("$parts/r" "$parts/h")
  index_bytes=0
  if [ -f "$agent_index" ]; then
    # The index's own time tells git which of its entries to look at again (racy git): kept too.
    stat -c %Y "$agent_index" >"$parts/m"
    index_bytes=$(stat -c %s "$agent_index")
    hashed+=("$agent_index" "$parts/m")
  fi
  ids=($(git hash-object -w --no-filters -- "\${hashed[@]}"))
  rm -rf "$parts"
  r=\${ids[0]} h=\${ids[1]}
  entries=$(printf '040000 tree %s\\tw\\n100644 blob %s\\th\\n100644 blob %s\\tr\\n' "$w" "$h" "$r")
  if [ "\${#ids[@]}" = 4 ]; then
    entries="$entries$(printf '\\n100644 blob %s\\ti\\n100644 blob %s\\tm' "\${ids[2]}" "\${ids[3]}")"
  fi
  # Bytes of the files that differ from the base, as they are now, plus the index and the refs.
  changes=$(git diff-tree -r --no-renames "$base" "$w")
  files=0
  [ -z "$changes" ] || files=$(printf '%s\\n' "$changes" | wc -l)
  changed=$(printf '%s\\n' "$changes" | awk '$5 ~ /^[AMT]/ { print $4 }' | git cat-file --batch-check='%(objectsize)' | awk '{ s += $1 } END { print s + 0 }')
  bytes=$((changed + index_bytes + \${#refs}))
  if [ "$bytes" -gt "$max" ]; then printf 'over %s %s\\n' "$bytes" "$files"; exit 0; fi
  t=$(printf '%s\\n' "$entries" | git mktree)
  k=$(git commit-tree "$t" -p "$base" -m "drydock checkpoint")
  {
    printf 'update ${CHECKPOINT_REFS}/%s %s\\n' "$slot" "$k"
    n=0
    printf '%s\\n' "$refs" | awk 'NF { print $1 }' | sort -u | while read -r sha; do
      n=$((n + 1)); printf 'update ${KEEP_REFS}/%s/%s %s\\n' "$slot" "$n" "$sha"
    done
  } | git update-ref --stdin
  printf 'saved %s %s %s\\n' "$k" "$bytes" "$files"
}

# The checkpoint's commit, checked against the one the host recorded, and its parts; with a
# second argument 0, not every object (an export's pack is checked whole by the box it goes to,
# an import's by index-pack --strict, which refuses a pack that names an object not there).
open_checkpoint() {
  k=$(git rev-parse --verify -q "${CHECKPOINT_REFS}/$slot^{commit}") || { echo "its data in the box is gone" >&2; exit 4; }
  [ "$k" = "$1" ] || { echo "its data in the box was changed" >&2; exit 4; }
  w=$(git rev-parse --verify -q "$k:w") && [ "$(git cat-file -t "$w")" = tree ] && h=$(git cat-file blob "$k:h") && refs=$(git cat-file blob "$k:r") ||
    { echo "its data in the box is incomplete" >&2; exit 4; }
  i=$(git rev-parse --verify -q "$k:i" 2>/dev/null) || i=
  [ "\${2:-1}" = 1 ] || return 0
  # Every object the checkpoint added must be there before anything is touched.
  # (rev-list reads commits and trees; cat-file looks for every blob.)
  objects=$(git rev-list --objects "$k" $(git for-each-ref --format='%(objectname)' "${KEEP_REFS}/$slot/") --not "$base" 2>/dev/null) &&
    ! printf '%s\n' "$objects" | cut -d' ' -f1 | git cat-file --batch-check='%(objectname)' | grep -q ' missing$' ||
    { echo "its objects in the box are missing or damaged" >&2; exit 4; }
}

# restore <slot> <commit> <include ignored> [imported]: "imported" when the checkpoint came from
# another box (a fork), whose index's stat data are not this box's.
restore() {
  all=$4 imported=\${5:-0}
  if [ "$imported" = 1 ]; then open_checkpoint "$3" 0; else open_checkpoint "$3"; fi
  # The working tree as it is now, in a copy of the diff's index; then git moves it to the
  # checkpoint's tree, writing and removing only the paths that differ (as reset --hard does).
  rm -f ${WORK_INDEX}
  if [ -f ${DIFF_INDEX} ]; then cp -p ${DIFF_INDEX} ${WORK_INDEX}; fi
  export GIT_INDEX_FILE=${WORK_INDEX}
  [ -f "$GIT_INDEX_FILE" ] || git read-tree "$base"
  # A fork's new box holds what its index says (a prefilled commit, or nothing): nothing to add.
  if [ "$imported" = 1 ]; then :
  elif [ "$all" = 1 ]; then git add -A -f >/dev/null; else git add -A >/dev/null; fi
  # (A fork's box is new: what it writes is not worth counting.)
  if [ "$imported" = 1 ]; then files=0; else files=$(git diff-index --cached --name-only "$w" | wc -l); fi
  git read-tree --reset -u "$w"
  if [ "$all" = 1 ]; then rm -f ${WORK_INDEX}; else mv -f ${WORK_INDEX} ${DIFF_INDEX}; fi
  unset GIT_INDEX_FILE
  # Refs: those the checkpoint did not have go, the others point where they pointed.
  {
    comm -23 <(list_refs | awk '{ print $2 }' | sort) <(printf '%s\\n' "$refs" | awk 'NF { print $2 }' | sort) |
      while read -r ref; do printf 'delete %s\\n' "$ref"; done
    printf '%s\\n' "$refs" | awk 'NF { printf "update %s %s\\n", $2, $1 }'
  } | git update-ref --stdin
  case "$h" in
    "ref: refs/"*) git symbolic-ref HEAD "\${h#ref: }" ;;
    *) git update-ref --no-deref HEAD "$h" ;;
  esac
  agent_index=$(git rev-parse --git-path index)
  rm -f "$agent_index"
  if [ -n "$i" ]; then
    git cat-file blob "$i" >"$agent_index"
    if [ "$imported" = 1 ] && [ "$all" != 1 ] && freshen_index "$agent_index"; then
      printf 'restored %s\\n' "$files"
      return
    fi
    if m=$(git cat-file blob "$k:m" 2>/dev/null) && [ "$m" -gt 0 ] 2>/dev/null; then touch -m -d "@$m" "$agent_index"; fi
  fi
  git update-index -q --refresh >/dev/null 2>&1 || true
  printf 'restored %s\\n' "$files"
}

# An index from another box, with this box's stat data instead: the diff's index, just made by
# the restore, moved to the index's own tree (read-tree -m keeps the stat data of every entry
# whose content is the same), kept only when it lists the very same entries, stages and flags.
# Else (a conflict, an intent-to-add entry) it fails and git refreshes the index, hashing every file.
freshen_index() {
  listing() { GIT_INDEX_FILE=$1 git ls-files -v -s; }
  if tree=$(GIT_INDEX_FILE=$1 git write-tree 2>/dev/null) &&
    cp ${DIFF_INDEX} "$1.drydock" &&
    GIT_INDEX_FILE=$1.drydock git read-tree -m "$tree" &&
    cmp -s <(listing "$1") <(listing "$1.drydock"); then
    mv -f "$1.drydock" "$1"
  else
    rm -f "$1.drydock"
    return 1
  fi
}

drop() {
  {
    printf 'delete ${CHECKPOINT_REFS}/%s\\n' "$slot"
    git for-each-ref --format='delete %(refname)' "${KEEP_REFS}/$slot/"
  } | git update-ref --stdin
}

# For a fork: the base commit's own bytes (base64, one line), then a pack of every object the
# checkpoint needs (the base's included) but those the new box has: the objects named on stdin
# (commits or trees it holds whole) and all they reach.
export_pack() {
  open_checkpoint "$3" 0
  git cat-file commit "$base" | base64 -w0
  echo
  {
    echo "$k"
    git for-each-ref --format='%(objectname)' "${KEEP_REFS}/$slot/"
    echo --not
    # Those this box has, and their trees (git leaves a tree out only when told it is had).
    haves=$(while read -r have; do case "$have" in (*[!0-9a-f]*|'') ;; (*) echo "$have" ;; esac; done)
    if [ -n "$haves" ]; then
      { printf '%s\n' $haves; printf '%s^{tree}\n' $haves; } | git cat-file --batch-check='%(objectname)' | grep -v ' missing$' || true
    fi
  } | git pack-objects --revs --stdout -q 2>/dev/null || { echo "its objects in the box are missing or damaged" >&2; exit 4; }
}

# In a fork's new box, whatever its workspace holds (nothing, or a prefilled commit of the same
# repository): the pack (git checks every object), the source's base commit, the checkpoint's
# refs; then a restore as above, which writes only the paths that differ from what is there.
import_pack() {
  k=$3 source_base=$4 all=$5 raw=$6
  git index-pack --stdin --strict >/dev/null
  made=$(printf '%s' "$raw" | base64 -d | git hash-object -t commit -w --stdin)
  [ "$made" = "$source_base" ] || { echo "the source's base commit did not arrive whole" >&2; exit 4; }
  git cat-file -e "$source_base^{tree}" || { echo "the source's base tree did not arrive" >&2; exit 4; }
  git update-ref ${BASE_REF} "$source_base"
  base=$source_base
  git cat-file -e "$k^{commit}" || { echo "the checkpoint did not arrive" >&2; exit 4; }
  refs=$(git cat-file blob "$k:r") || { echo "the checkpoint did not arrive whole" >&2; exit 4; }
  {
    printf 'update ${CHECKPOINT_REFS}/%s %s\\n' "$slot" "$k"
    n=0
    printf '%s\\n' "$refs" | awk 'NF { print $1 }' | sort -u | while read -r sha; do
      n=$((n + 1)); printf 'update ${KEEP_REFS}/%s/%s %s\\n' "$slot" "$n" "$sha"
    done
  } | git update-ref --stdin
  # A box with no files yet starts from an empty index, not the base's: nothing to look at.
  [ -f ${DIFF_INDEX} ] || GIT_INDEX_FILE=${DIFF_INDEX} git read-tree --empty
  rm -f ${PREFILLED_MARK}
  restore "$op" "$slot" "$k" "$all" 1
}

# The commits every ref names, and the tree of the commit given (when the box has it): what a new
# box holds whole, so a fork need not send it.
tips() {
  {
    git for-each-ref --format='%(objectname)'
    case "$3" in (*[!0-9a-f]*|'') ;; (*) git rev-parse -q --verify "$3^{tree}" 2>/dev/null || true ;; esac
  } | sort -u
}

case "$op" in
  save) save "$@" ;;
  restore) restore "$@" ;;
  drop) drop ;;
  export) export_pack "$@" ;;
  import) import_pack "$@" ;;
  tips) tips "$@" ;;
  *) echo "unknown operation" >&2; exit 2 ;;
esac
`;
