#!/usr/bin/env bash
# The checkpoint script (src/workspace/checkpoint-script.ts says what it does): $1 the operation
# (save, restore, export, import, tips), $2 the slot, then the operation's own arguments. Run in
# the box with `bash -c`, from the line after this header, @@NAME@@ filled in by the host.
# (a= b= sets each to empty, on purpose; h_id, r_id and k_date are read by fork-functions.sh)
# shellcheck disable=SC1007,SC2034

set -e -o pipefail
cd /workspace
export GIT_AUTHOR_NAME=drydock GIT_AUTHOR_EMAIL=drydock@localhost GIT_COMMITTER_NAME=drydock GIT_COMMITTER_EMAIL=drydock@localhost
export GIT_TERMINAL_PROMPT=0 LC_ALL=C GIT_NO_REPLACE_OBJECTS=1
op=$1 slot=$2
case "$slot" in (*[!0-9a-f]*|'') echo "bad slot" >&2; exit 2 ;; esac
# (Every git process costs a few ms in a busy box: the script asks each git for as much as it can,
# reads what a plain file holds itself, and counts and sorts in bash.)
@@ADD_CHANGES@@

# The agent's index: .git/index, unless .git is a file naming the repository elsewhere.
index_path() {
  if [ -d .git ]; then agent_index=.git/index; else agent_index=$(git rev-parse --git-path index); fi
}

# Every ref but drydock's own and symbolic ones (origin/HEAD follows its target), one
# "<object> <name>" a line, in $refs_now; the session's base in $base (a commit: a save's
# commit-tree and a restore's open_checkpoint refuse anything else). Only names and ids are asked
# for: a format that reads the objects (their type) makes git die at the first ref whose object
# the agent removed, where now it leaves that ref out.
read_refs() {
  local sha ref sym
  refs_now= base=
  while read -r sha ref sym; do
    case "$ref" in
      @@BASE_REF@@) base=$sha ;;
      refs/drydock/*) ;;
      *) [ -n "$sym" ] || refs_now+="$sha $ref"$'\n' ;;
    esac
  done < <(git for-each-ref --format='%(objectname) %(refname) %(symref)' 2>/dev/null)
  refs_now=${refs_now%$'\n'}
}

# What HEAD is: "ref: refs/heads/x" or a commit id, read from .git/HEAD when it is one of those.
read_head() {
  local line=
  if [ -d .git ] && [ ! -L .git/HEAD ] && read -r line <.git/HEAD 2>/dev/null; then
    case "$line" in
      "ref: refs/"*) head=$line; return ;;
      *[!0-9a-f]*|'') ;;
      *) head=$line; return ;;
    esac
  fi
  if head=$(git symbolic-ref -q HEAD); then head="ref: $head"
  else head=$(git rev-parse --verify -q HEAD); fi
}

# A fork's new box has no base until its import brings one.
case "$op" in
  import|tips) base= ;;
  *)
    index_path
    read_refs
    [ -n "$base" ] || { echo "the session's base is gone" >&2; exit 5; } ;;
esac

# The working tree as a tree object, with the diff's index (stat data fresh: only changed files are
# read) or, to include ignored files, a copy of it.
worktree_tree() {
  if [ "$1" = 1 ]; then
    rm -f @@WORK_INDEX@@
    if [ -f @@DIFF_INDEX@@ ]; then cp -p @@DIFF_INDEX@@ @@WORK_INDEX@@; fi
    export GIT_INDEX_FILE=@@WORK_INDEX@@
  else
    export GIT_INDEX_FILE=@@DIFF_INDEX@@
  fi
  # (A command substitution runs this without set -e: each failure is passed on by hand, or a
  # git add that failed, as on a FIFO where git holds a file, would save the index as it was.)
  if [ "$1" = 1 ]; then
    [ -f "$GIT_INDEX_FILE" ] || git read-tree "$base" || return
    git add -A -f >/dev/null || return
  elif [ -f "$GIT_INDEX_FILE" ]; then add_changes || return
  else { git read-tree "$base" && add_changes whole; } || return; fi
  git write-tree
}

# Prints one "update <keep ref> <object>" line per object the refs ($1: "<object> <name>" lines) name.
keep_updates() {
  local -A seen=()
  local sha ref n=0
  while read -r sha ref; do
    [ -n "$sha" ] && [ -z "${seen[$sha]}" ] || continue
    seen[$sha]=1 n=$((n + 1))
    printf 'update @@KEEP_REFS@@/%s/%s %s\n' "$slot" "$n" "$sha"
  done <<<"$1"
}

# The refs, HEAD, the agent's index and its time as objects (r, h, i, m): a line "<index time>
# <index bytes>", their ids one a line, then "ok". Run beside the working tree's add and write-tree:
# two gits at once, each waiting on its own start and files.
hash_parts() {
  local index_time=0 index_bytes=0
  if [ -f "$agent_index" ]; then
    # The index's own time tells git which of its entries to look at again (racy git): kept too.
    read -r index_time index_bytes < <(stat -c '%Y %s' "$agent_index")
    printf '%s %s\n' "$index_time" "$index_bytes"
    git hash-object -w --no-filters -- <(printf '%s' "$refs") <(printf '%s' "$head") "$agent_index" <(printf '%s\n' "$index_time")
  else
    printf '0 0\n'
    git hash-object -w --no-filters -- <(printf '%s' "$refs") <(printf '%s' "$head")
  fi && echo ok
}

# The paths of tree $1 that differ from the base and the bytes of those that are files: a line
# "<paths> <bytes>", then "ok". (A repository inside the workspace is one entry, its commit, which
# is not in this store.) Run beside the checkpoint's commit being made.
count_changes() {
  local files=0 blobs= changed=0 size
  while read -r _ mode _ blob status _; do
    files=$((files + 1))
    case "$mode:$status" in 160000:*) ;; *:[AMT]*) blobs+="$blob"$'\n' ;; esac
  done < <(git diff-tree -r --no-renames "$base" "$1")
  if [ -n "$blobs" ]; then
    while read -r size; do changed=$((changed + size)); done < <(printf '%s' "$blobs" | git cat-file --batch-check='%(objectsize)')
  fi
  printf '%s %s\nok\n' "$files" "$changed"
}

save() {
  all=$3 max=$4
  refs=$refs_now
  read_head
  local parts counts line ok= ids=()
  exec {parts}< <(hash_parts)
  w=$(worktree_tree "$all")
  read -r -u "$parts" index_time index_bytes || true
  while read -r -u "$parts" line; do
    if [ "$line" = ok ]; then ok=1; else ids+=("$line"); fi
  done
  exec {parts}<&-
  [ -n "$ok" ] || { echo "git could not store the index and the refs" >&2; exit 1; }
  r=${ids[0]} h=${ids[1]}
  entries=$(printf '040000 tree %s\tw\n100644 blob %s\th\n100644 blob %s\tr\n' "$w" "$h" "$r")
  if [ "${#ids[@]}" = 4 ]; then
    entries="$entries$(printf '\n100644 blob %s\ti\n100644 blob %s\tm' "${ids[2]}" "${ids[3]}")"
  fi
  # Bytes of the files that differ from the base, as they are now, plus the index and the refs,
  # counted while the commit is made; past the limit no ref names it (git prunes it in time).
  exec {counts}< <(count_changes "$w")
  t=$(printf '%s\n' "$entries" | git mktree)
  k=$(git commit-tree "$t" -p "$base" -m "drydock checkpoint")
  files= changed= line=
  read -r -u "$counts" files changed && read -r -u "$counts" line || true
  exec {counts}<&-
  [ "$line" = ok ] || { echo "git could not count the changed files" >&2; exit 1; }
  bytes=$((changed + index_bytes + ${#refs}))
  if [ "$bytes" -gt "$max" ]; then printf 'over %s %s\n' "$bytes" "$files"; exit 0; fi
  {
    printf 'update @@CHECKPOINT_REFS@@/%s %s\n' "$slot" "$k"
    keep_updates "$refs"
  } | git update-ref --stdin
  printf 'saved %s %s %s\n' "$k" "$bytes" "$files"
  # The shell's state, as the shell just wrote it (session/shell-state.ts), after that line.
  [ "$5" != 1 ] || head -c @@MAX_SHELL_STATE_FILE_BYTES@@ -- @@SHELL_STATE_FILE@@
}

# The checkpoint's commit, checked against the one the host recorded, and its parts. Not every
# object it needs: an export's pack is checked whole by the box it goes to, an import's by
# index-pack --strict (which refuses a pack that names an object not there), and a restore checks
# the objects it will read once it knows which (restore).
open_checkpoint() {
  local want=(0 0 1 1 0 1 0 0 1 0) shas=() types=() bodies=() j line
  # One git looks up the ref and every part, and reads h, r, m (the index's time) and the commit.
  {
    for j in 0 1 2 3 4 5 6 7 8 9; do
      batch_answer "${want[j]}" || { echo "its data in the box is unreadable" >&2; exit 4; }
      shas[j]=$obj_sha types[j]=$obj_type bodies[j]=$obj_body
    done
  } < <(printf '%s\n' "info @@CHECKPOINT_REFS@@/$slot^{commit}" "info $1:w" "contents $1:h" "contents $1:r"     "info $1:i" "contents $1:m" "info $base^{tree}" "info $1:d" "contents $1" "info $base^{commit}" | git cat-file --batch-command 2>/dev/null)
  k=${shas[0]}
  [ "${types[0]}" = commit ] || { echo "its data in the box is gone" >&2; exit 4; }
  [ "$k" = "$1" ] || { echo "its data in the box was changed" >&2; exit 4; }
  [ "${types[6]}" = tree ] && [ "${types[9]}" = commit ] || { echo "the session's base tree is missing" >&2; exit 4; }
  [ "${types[1]}" = tree ] && [ "${types[2]}" = blob ] && [ "${types[3]}" = blob ] ||
    { echo "its data in the box is incomplete" >&2; exit 4; }
  w=${shas[1]} h=${bodies[2]} refs=${bodies[3]} h_id=${shas[2]} r_id=${shas[3]} i= m_time= d=
  [ "${types[4]}" != blob ] || i=${shas[4]}
  [ "${types[7]}" != blob ] || d=${shas[7]}
  # Its time ("<seconds> <zone>"), which a fork's own commit of it takes too: the same checkpoint
  # gives the same commit, whichever box it is forked to.
  k_date=
  while IFS= read -r line; do case "$line" in ("committer "*) k_date=${line##*> }; break ;; esac; done <<<"${bodies[8]}"
  [ "${types[5]}" != blob ] || m_time=${bodies[5]%$'\n'}
}

missing_objects() { echo "its objects in the box are missing or damaged" >&2; exit 4; }

# One answer of cat-file --batch-command: obj_sha and obj_type (both empty when the object is
# missing) and, when $1 is 1 ("contents"), obj_body (text: a checkpoint's parts hold no NUL).
batch_answer() {
  local size
  obj_sha= obj_type= obj_body=
  read -r obj_sha obj_type size || return 1
  case "$obj_type" in (missing|ambiguous) obj_sha= obj_type=; return 0 ;; esac
  [ -n "$obj_type" ] || return 1
  [ "$1" = 1 ] || return 0
  if [ "$size" -gt 0 ]; then IFS= read -r -d '' -N "$size" obj_body || return 1; fi
  IFS= read -r _ || true
}

# Refs: those the checkpoint did not have go, the others point where they pointed; those that
# already do, and HEAD when it is as it was, cost no git. (Ref names hold no spaces or newlines:
# git refuses them.) Each is written as itself, never through a link the agent made of it since
# (no-deref: a ref turned into a symbolic ref naming main must not move main).
put_back_refs() {
  local -A kept=() now=()
  local sha ref updates=
  while read -r sha ref; do [ -z "$ref" ] || kept[$ref]=$sha; done <<<"$refs"
  while read -r sha ref; do
    [ -n "$ref" ] || continue
    now[$ref]=$sha
    [ -n "${kept[$ref]+x}" ] || updates+="option no-deref"$'\n'"delete $ref"$'\n'
  done <<<"$refs_now"
  for ref in "${!kept[@]}"; do
    [ "${now[$ref]-}" = "${kept[$ref]}" ] || updates+="option no-deref"$'\n'"update $ref ${kept[$ref]}"$'\n'
  done
  [ -z "$updates" ] || printf '%s' "$updates" | git update-ref --stdin
  read_head
  if [ "$head" != "$h" ]; then
    case "$h" in
      "ref: refs/"*) git symbolic-ref HEAD "${h#ref: }" ;;
      *) git update-ref --no-deref HEAD "$h" ;;
    esac
  fi
}

# The agent's index as it was saved in this box, with its own time: its entries' stat data are
# this box's, so git looks again only at the files the restore wrote (a few, not the whole tree).
put_back_index() {
  rm -f "$agent_index"
  git cat-file blob "$i" >"$agent_index"
  if [ -n "$m_time" ] && [ "$m_time" -gt 0 ] 2>/dev/null; then touch -m -d "@$m_time" "$agent_index"; fi
}

# restore <slot> <commit> <include ignored> [imported] [shell]: "imported" when the checkpoint came
# from another box (a fork), whose index's stat data are not this box's; "shell" 1: stdin holds the
# shell's state, for the shell to read once this ends (session/shell-state.ts).
restore() {
  all=$4 imported=${5:-0}
  [ "${6:-0}" != 1 ] || cat >| @@SHELL_STATE_FILE@@
  open_checkpoint "$3"
  # The working tree as it is now, in the diff's index (with ignored files, a copy of it); then
  # git moves it to the checkpoint's tree, writing and removing only the paths that differ (as
  # reset --hard does). Git keeps an index whole at every step, so one left midway still says
  # what the files hold. (A fork's box also loses the mark of its prefill.)
  # (rm only for what is there: a process costs 2 ms in a box, and these are seldom there.)
  local left
  for left in @@WORK_INDEX@@ ${prefilled_mark:-}; do
    if [ -e "$left" ] || [ -L "$left" ]; then rm -f -- "$left"; fi
  done
  if [ "$all" != 1 ]; then export GIT_INDEX_FILE=@@DIFF_INDEX@@
  else
    if [ -f @@DIFF_INDEX@@ ]; then cp -p @@DIFF_INDEX@@ @@WORK_INDEX@@; fi
    export GIT_INDEX_FILE=@@WORK_INDEX@@
  fi
  local whole=
  [ -f "$GIT_INDEX_FILE" ] || { git read-tree "$base"; whole=whole; }
  # A fork's new box holds what its index says (a prefilled commit, or nothing): nothing to add.
  if [ "$imported" = 1 ]; then :
  elif [ "$all" = 1 ]; then git add -A -f >/dev/null; else add_changes $whole; fi
  # The index now holds the working tree (a fork's box: what it was given, stat data fresh), so
  # one compare with the checkpoint's tree names every path that differs, without looking at the
  # files again; only those are written from the checkpoint, or removed (in the index, not the
  # checkpoint: git restore without overlay), by one git, as read-tree --reset -u would, which
  # looks at every file once more.
  files=0
  # A path under another one named (a file that became a directory, or one that replaced it) is
  # left out: the one above takes it, and git refuses a path no entry is left for. (A fork's box
  # whose index is empty differs everywhere: the checkout below writes it whole, and no path is
  # named, so no loop of the shell's runs once for each of its files.)
  local path up record object paths=() wanted=() links=()
  local -A named=()
  [ -n "${empty_box:-}" ] || while IFS= read -r -d '' record && IFS= read -r -d '' path; do
    files=$((files + 1))
    named["/$path"]=1
    # ":<mode in w> <mode now> <object in w> <object now> <status>" (modes are six digits): the
    # object the restore will write there (none where w has nothing, and a nested repository's
    # commit is not in this store).
    if [ "$imported" != 1 ]; then
      case "${record:1:6}" in (000000|160000) ;; (*) object=${record:15}; wanted+=("${object%% *}") ;; esac
    fi
    case "${record:1:6} ${record:8:6}" in (160000*|*160000) links+=("$path") ;; esac
    up=$path
    while [ "${up%/*}" != "$up" ]; do
      up=${up%/*}
      [ -z "${named["/$up"]+x}" ] || continue 2
    done
    paths+=("$path")
  done < <(git diff-index --cached --no-renames -z --raw "$w" 2>/dev/null)
  # diff-index read every tree of w along the paths that differ (a missing one fails it); the
  # objects the restore reads, and those the refs will name, must be there before anything is
  # touched. (The agent's own commits are not walked: a restore puts back the refs it had, and
  # what the agent removed from under its own commits stays removed. A fork's import was checked
  # whole by index-pack.)
  [ -n "${empty_box:-}" ] || wait $! || missing_objects
  if [ "$imported" != 1 ]; then
    local sha ref found
    while read -r sha ref; do [ -z "$sha" ] || wanted+=("$sha"); done <<<"$refs"
    if [ "${#wanted[@]}" -gt 0 ]; then
      found=$(printf '%s\n' "${wanted[@]}" | git cat-file --batch-check='%(objecttype)' 2>/dev/null) || missing_objects
      [[ $found != *' missing'* ]] || missing_objects
    fi
  fi
  # The refs and HEAD, and an index saved in this box whole, go back while the files do: no git
  # of one reads or writes what the other does (the files' git works in the diff's index).
  put_back_refs &
  refs_job=$! index_job=
  if [ "$imported" != 1 ] && [ -n "$i" ] && { [ -z "$d" ] || [ "$all" = 1 ]; }; then
    put_back_index &
    index_job=$!
  fi
  if [ -n "${empty_box:-}" ] || [ "$files" -gt 256 ]; then
    # Many paths: git matches every entry against every path named, so one pass is cheaper.
    git read-tree --reset -u "$w"
  elif [ "$files" -gt 0 ]; then
    GIT_LITERAL_PATHSPECS=1 git -c core.hooksPath=/dev/null -c core.preloadIndex=false restore -q --source="$w" --staged --worktree       --pathspec-from-file=<(printf '%s\0' "${paths[@]}") --pathspec-file-nul
  fi
  # A repository inside the workspace is left as it is: git writes no commit of another
  # repository, and removes none (the checkpoint holds only the commit it was at, not its files).
  # The diff's index takes each as it now is, as git add -A would, or the next diff would say the
  # checkpoint's commit of a repository that is at another.
  if [ "$all" != 1 ] && [ "${#links[@]}" -gt 0 ]; then
    printf '%s\0' "${links[@]}" | git update-index --add --remove --replace -z --stdin >/dev/null 2>&1 ||
      git add -A >/dev/null 2>&1 || true
  fi
  [ "$all" != 1 ] || rm -f @@WORK_INDEX@@
  unset GIT_INDEX_FILE
  wait "$refs_job" || exit 1
  if [ -n "$index_job" ]; then
    wait "$index_job" || exit 1
    printf 'restored %s\n' "$files"
    return
  fi
  rm -f "$agent_index"
  if [ -n "$d" ] && [ "$all" != 1 ]; then
    # The index as what it changes in the diff's, which now holds the checkpoint's working tree
    # with this box's stat data (a fork's checkpoint: see export_pack).
    cp @@DIFF_INDEX@@ "$agent_index.drydock"
    git cat-file blob "$d" | GIT_INDEX_FILE=$agent_index.drydock git update-index -z --index-info
    mv -f "$agent_index.drydock" "$agent_index"
    printf 'restored %s\n' "$files"
    return
  fi
  [ -n "$i" ] || { printf 'restored %s\n' "$files"; return; }
  git cat-file blob "$i" >"$agent_index"
  if [ "$imported" = 1 ]; then
    if [ "$all" != 1 ] && freshen_index "$agent_index"; then
      printf 'restored %s\n' "$files"
      return
    fi
    # Stat data from another box: every entry is looked at again, once, here.
    git update-index -q --refresh >/dev/null 2>&1 || true
  fi
  printf 'restored %s\n' "$files"
}

drop() {
  {
    printf 'delete @@CHECKPOINT_REFS@@/%s\n' "$slot"
    git for-each-ref --format='delete %(refname)' "@@KEEP_REFS@@/$slot/"
  } | git update-ref --stdin
}

@@FORK_FUNCTIONS@@
case "$op" in
  save) save "$@" ;;
  restore) restore "$@" ;;
  drop) drop ;;
  export) export_pack "$@" ;;
  import) import_pack "$@" ;;
  tips) tips "$@" ;;
  *) echo "unknown operation" >&2; exit 2 ;;
esac
