/**
 * The bash scripts behind `box-files`, one per operation. Each takes the path as "$1" (never
 * interpolated), checks it in the box and then acts, so a check and its use are one exec. Replies
 * start with NUL-terminated header fields; refusals are the exit codes in EXIT, detail on stderr.
 */

/** Exit codes the scripts use to say why they refused; any other code is an unexpected failure. */
export const EXIT = {
  UNRESOLVABLE: 90,
  OUTSIDE: 91,
  MISSING: 92,
  DIRECTORY: 93,
  SPECIAL: 94,
  UNREADABLE: 95,
  NO_PARENT: 96,
  NOT_DIRECTORY: 97,
} as const;

/** Resolves "$1" into $p, symlinks followed in the box, and refuses a real path outside /workspace. */
export const RESOLVE = `
set -u
p=$(realpath -m -- "$1" 2>&1) || { printf '%s' "$p" >&2; exit ${EXIT.UNRESOLVABLE}; }
case "$p" in /workspace|/workspace/*) ;; *) printf '%s' "$p" >&2; exit ${EXIT.OUTSIDE} ;; esac
`;

/** Requires $p to be a readable regular file. */
const REQUIRE_FILE = `
[ -e "$p" ] || exit ${EXIT.MISSING}
[ -d "$p" ] && exit ${EXIT.DIRECTORY}
[ -f "$p" ] || exit ${EXIT.SPECIAL}
[ -r "$p" ] || exit ${EXIT.UNREADABLE}
size=$(stat -c %s -- "$p")
`;

export const READ_SCRIPT = `${RESOLVE}${REQUIRE_FILE}
printf '%s\\0%s\\0' "$p" "$size"
head -c "$2" -- "$p"
`;

export const LINES_SCRIPT = `${RESOLVE}${REQUIRE_FILE}
total=$(wc -l < "$p")
[ "$size" -gt 0 ] && [ -n "$(tail -c 1 -- "$p" | tr -d '\\0')" ] && total=$((total + 1))
printf '%s\\0%s\\0%s\\0' "$p" "$size" "$total"
if [ "$3" = "$" ]; then sed -n "$2,\\$p" -- "$p"; else sed -n "$2,$3p;$3q" -- "$p"; fi | head -c "$4"
`;

export const STAT_SCRIPT = `${RESOLVE}
if [ -f "$p" ]; then k=file; elif [ -d "$p" ]; then k=directory; elif [ -e "$p" ]; then k=other; else k=missing; fi
s=0; [ "$k" = missing ] || s=$(stat -c %s -- "$p")
printf '%s\\0%s\\0%s' "$p" "$k" "$s"
`;

// Writes through a temporary file in the same directory and renames it into place, so a failed
// write leaves the old content whole; an existing file keeps its mode.
export const WRITE_SCRIPT = `${RESOLVE}
[ -d "$p" ] && exit ${EXIT.DIRECTORY}
[ -e "$p" ] && [ ! -f "$p" ] && exit ${EXIT.SPECIAL}
d=$(dirname -- "$p")
if [ "$2" = 1 ] && [ ! -e "$d" ]; then mkdir -p -- "$d" || exit 1; fi
[ -d "$d" ] || { printf '%s' "$d" >&2; exit ${EXIT.NO_PARENT}; }
t=$(mktemp -- "$d/.drydock-write-XXXXXX") || exit 1
trap 'rm -f -- "$t"' EXIT
cat > "$t" || exit 1
# A write cut short (a cancelled call) must not replace the file with part of its content.
[ "$(stat -c %s -- "$t")" = "$4" ] || { printf 'got %s of %s bytes' "$(stat -c %s -- "$t")" "$4" >&2; exit 1; }
if [ -e "$p" ]; then chmod --reference="$p" -- "$t"; else chmod 644 -- "$t"; fi
if [ -n "$3" ]; then chmod -- "$3" "$t" || exit 1; fi
mv -f -- "$t" "$p" || exit 1
trap - EXIT
printf '%s' "$p"
`;

export const REMOVE_SCRIPT = `${RESOLVE}${REQUIRE_FILE}
rm -f -- "$p" && printf '%s' "$p"
`;

// For each path: status, real path and byte count, NUL-terminated, then that many bytes. A copy
// is taken first so the count is exact even if the file changes meanwhile.
export const READ_MANY_SCRIPT = `
set -u
max=$1; shift
t=$(mktemp) || exit 1
trap 'rm -f -- "$t"' EXIT
for f; do
  p=$(realpath -m -- "$f" 2>/dev/null) || p=$f
  case "$p" in /workspace|/workspace/*) ;; *) printf 'outside\\0%s\\0%s\\0' "$p" 0; continue ;; esac
  if [ ! -f "$p" ] || [ ! -r "$p" ]; then printf 'unreadable\\0%s\\0%s\\0' "$p" 0; continue; fi
  head -c "$max" -- "$p" > "$t" || { printf 'unreadable\\0%s\\0%s\\0' "$p" 0; continue; }
  printf 'ok\\0%s\\0%s\\0' "$p" "$(stat -c %s -- "$t")"
  cat -- "$t"
done
`;

export const LIST_SCRIPT = `${RESOLVE}
[ -e "$p" ] || exit ${EXIT.MISSING}
[ -d "$p" ] || exit ${EXIT.NOT_DIRECTORY}
printf '%s\\0' "$p"
find "$p" -mindepth 1 -maxdepth "$2" -name '.*' -prune -o -printf '%y\\t%P\\0'
`;
