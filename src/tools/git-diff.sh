# shellcheck shell=bash
# git_diff in the box (src/tools/git-diff-tool.ts says how): $1 path, $2 base ("" for HEAD), $3 cap;
# after resolve.sh (tools/box-files/). Prints the base, the patch's size and its shortstat line
# NUL-ended, then at most $3 bytes of the patch.
# (Sent as part of a bash -c script from the line after this header; $p is resolve.sh's; exit
# @@CODE@@ is a number once filled in.)
# shellcheck disable=SC2154,SC2242
if [ -d "$p" ]; then dir=$p; spec=.; else dir=${p%/*}; spec=${p##*/}; fi
while [ ! -d "$dir" ]; do spec="${dir##*/}/$spec"; dir=${dir%/*}; done
cd -- "$dir" || exit 1
{ read -r inside && read -r real_index; } < <(git rev-parse --is-inside-work-tree --git-path index 2>/dev/null)
[ "$inside" = true ] || { printf '%s' "$dir" >&2; exit @@NOT_A_REPO@@; }
if ! base=$(git rev-parse --verify --quiet "${2:-HEAD}^{commit}"); then
  # No commit yet: without a base_commit, everything is new against the empty tree.
  [ -z "$2" ] || { printf '%s' "$2" >&2; exit @@BAD_BASE@@; }
  base=$(git hash-object -t tree /dev/null)
fi
t=$(mktemp -d) || exit 1
trap 'rm -rf -- "$t"' EXIT
[ -f "$real_index" ] && cp -- "$real_index" "$t/index"
export GIT_INDEX_FILE=$t/index
[ -f "$t/index" ] || git read-tree "$base" || exit 1
git add -A :/ >/dev/null || exit 1
git -c core.quotepath=false diff --cached --no-color --no-ext-diff --no-textconv --shortstat -p "$base" -- "$spec" > "$t/out" || exit 1
size=$(stat -c %s "$t/out"); stat=; skip=0
if [ "$size" -gt 0 ]; then IFS= read -r stat < "$t/out"; skip=$((${#stat} + 2)); fi
printf '%s\0%s\0%s\0' "$base" "$((size - skip))" "$stat"
tail -c +$((skip + 1)) "$t/out" | head -c "$3"
