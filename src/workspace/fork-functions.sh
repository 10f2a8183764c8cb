# shellcheck shell=bash
# The fork half of the checkpoint script (src/workspace/fork-script.ts says what each does): bash
# functions put into checkpoint.sh, which calls them; what follows this header is sent.
# (a= b= sets each to empty, on purpose; the variables of checkpoint.sh are its, and what it
# sets here checkpoint.sh reads; parts=(${head#:}) splits git's fixed-format record on purpose)
# shellcheck disable=SC1007,SC2034,SC2154,SC2206

# export <slot> <commit> <include ignored>, for a fork: the base commit's own bytes (base64, one
# line), the commit the new box is to restore (a line), then a pack of every object that commit
# needs (the base's included) but those the new box has: the objects named on stdin (commits or
# trees it holds whole) and all they reach. That commit is the checkpoint's own, or, when its
# index is plain, one made for the fork: its index as a delta (d, see index_delta) instead of i.
# The pack crosses the machine, not a network: zlib's fastest level and no search for deltas
# (a third of pack-objects' time for a few dozen objects; objects already packed are sent as
# they are).
export_pack() {
  open_checkpoint "$3"
  local fork_k=$k
  if [ -n "$i" ] && [ "$4" = 0 ] && index_delta; then
    fork_k=$(printf '040000 tree %s\tw\n100644 blob %s\th\n100644 blob %s\tr\n100644 blob %s\td\n' "$w" "$h_id" "$r_id" "$d" | git mktree)
    fork_k=$(GIT_AUTHOR_DATE=$k_date GIT_COMMITTER_DATE=$k_date git commit-tree "$fork_k" -p "$base" -m "drydock checkpoint")
  fi
  git cat-file commit "$base" | base64 -w0
  printf '\n%s\n' "$fork_k"
  {
    echo "$fork_k"
    git for-each-ref --format='%(objectname)' "@@KEEP_REFS@@/$slot/"
    echo --not
    # Those this box has, and their trees (git leaves a tree out only when told it is had).
    haves=$(while read -r have; do case "$have" in (*[!0-9a-f]*|'') ;; (*) echo "$have" ;; esac; done)
    if [ -n "$haves" ]; then
      { printf '%s
' $haves; printf '%s^{tree}
' $haves; } | git cat-file --batch-check='%(objectname)' | grep -v ' missing$' || true
    fi
  } | git -c pack.compression=1 pack-objects --window=0 --revs --stdout -q 2>/dev/null || { echo "its objects in the box are missing or damaged" >&2; exit 4; }
}

# In a fork's new box, whatever its workspace holds (nothing, or a prefilled commit of the same
# repository): the pack (git checks every object), the source's base commit, the checkpoint's
# refs; then a restore as above, which writes only the paths that differ from what is there.
import_pack() {
  k=$3 source_base=$4 all=$5 raw=$6
  git index-pack --stdin --strict >/dev/null
  made=$(printf '%s' "$raw" | base64 -d | git hash-object -t commit -w --stdin)
  [ "$made" = "$source_base" ] || { echo "the source's base commit did not arrive whole" >&2; exit 4; }
  base=$source_base
  # The base and the checkpoint's ref (git refuses a ref to an object it lacks); the restore's
  # open_checkpoint then checks every part, and the base's tree.
  printf 'update %s %s\n' @@BASE_REF@@ "$base" @@CHECKPOINT_REFS@@/"$slot" "$k" | git update-ref --stdin 2>/dev/null ||
    { echo "the checkpoint did not arrive" >&2; exit 4; }
  index_path
  read_refs
  # A box with no files yet starts from an empty index, not the base's: nothing to look at, and
  # the restore checks the whole checkpoint out (it reports no count of paths then).
  empty_box=
  [ -f @@DIFF_INDEX@@ ] || { GIT_INDEX_FILE=@@DIFF_INDEX@@ git read-tree --empty; empty_box=1; }
  prefilled_mark=@@PREFILLED_MARK@@
  restore "$op" "$slot" "$k" "$all" 1
  keep_updates "$refs" | git update-ref --stdin
}

# The commits every ref names, and the tree of the commit given (when the box has it): what a new
# box holds whole, so a fork need not send it.
tips() {
  {
    git for-each-ref --format='%(objectname)'
    case "$3" in (*[!0-9a-f]*|'') ;; (*) git rev-parse -q --verify "$3^{tree}" 2>/dev/null || true ;; esac
  } | sort -u
}

# An index from another box, with this box's stat data instead: the diff's index, just made by
# the restore, moved to the index's own tree (read-tree -m keeps the stat data of every entry
# whose content is the same). Kept only when that gives the very same entries, stages and flags:
# every entry of the index is plain (tag H, stage 0: no conflict, no assume-unchanged or
# skip-worktree flag), and both hold as many entries (bytes 8-11 of an index: an intent-to-add
# entry is not in the tree).
# Else git refreshes the index, hashing every file.
freshen_index() {
  if tree=$(GIT_INDEX_FILE=$1 git write-tree 2>/dev/null) && plain_index "$1" &&
    cp @@DIFF_INDEX@@ "$1.drydock" &&
    GIT_INDEX_FILE=$1.drydock git read-tree -m "$tree" &&
    cmp -s -i 8 -n 4 "$1" "$1.drydock"; then
    mv -f "$1.drydock" "$1"
  else
    rm -f "$1.drydock"
    return 1
  fi
}

# Whether every entry of index $1 is plain: stage 0, no flag. An index of version 2 holds no
# extended flag (skip-worktree, intent-to-add: git writes version 3 for those); ls-files tags every
# other entry "H " (conflicts "M ", assume-unchanged in lower case). (grep -c reads all its input:
# with -q it would stop at the first line found, git would die of SIGPIPE, and under pipefail the
# pipeline would fail, reading a match as none.)
plain_index() {
  local version odd
  read -r _ version < <(od -An -tu4 -N8 --endian=big "$1") && [ "$version" = 2 ] || return 1
  odd=$(GIT_INDEX_FILE=$1 git ls-files -v | { grep -c -v '^H ' || true; }) && [ "$odd" = 0 ]
}

# For a fork, when the checkpoint's index is plain: the index as what it changes in the
# working tree's (w), one "<mode> <object>\t<path>" NUL-ended record per path it holds otherwise
# (mode 0: not in the index), for update-index --index-info, as a blob: $d. Much smaller than the
# index (800 KB at 10,000 files), and the box it goes to applies it to an index with its own stat
# data, rather than rebuilding one (read-tree -m) from an index with another box's.
# (A file of its own, made by mktemp: a large fork's copies each export at once.)
index_delta() {
  local tmp head path parts
  tmp=$(mktemp /tmp/.drydock-export-index.XXXXXX) || return 1
  git cat-file blob "$i" >$tmp && plain_index $tmp || { rm -f $tmp; return 1; }
  d=$(GIT_INDEX_FILE=$tmp git diff-index --cached --no-renames -z --raw "$w" | {
    # ":<mode in w> <mode in the index> <object in w> <object in the index> <status>", the path.
    while IFS= read -r -d '' head && IFS= read -r -d '' path; do
      parts=(${head#:})
      case "${parts[4]}" in
        D) printf '0 %s\t%s\0' "${parts[3]}" "$path" ;;
        *) printf '%s %s\t%s\0' "${parts[1]}" "${parts[3]}" "$path" ;;
      esac
    done
  } | git hash-object -w --stdin) || { rm -f $tmp; return 1; }
  rm -f $tmp
}
