# shellcheck shell=bash
# For each path: status, real path and byte count, NUL-terminated, then that many bytes (at
# most $1). A copy is taken first so the count is exact even if the file changes meanwhile.
# (Sent as part of a bash -c script from the line after this header; @@NAME@@ are EXIT's codes.)

set -u
max=$1; shift
t=$(mktemp) || exit 1
trap 'rm -f -- "$t"' EXIT
for f; do
  p=$(realpath -m -- "$f" 2>/dev/null) || p=$f
  case "$p" in /workspace|/workspace/*) ;; *) printf 'outside\0%s\0%s\0' "$p" 0; continue ;; esac
  if [ ! -f "$p" ] || [ ! -r "$p" ]; then printf 'unreadable\0%s\0%s\0' "$p" 0; continue; fi
  head -c "$max" -- "$p" > "$t" || { printf 'unreadable\0%s\0%s\0' "$p" 0; continue; }
  printf 'ok\0%s\0%s\0' "$p" "$(stat -c %s -- "$t")"
  cat -- "$t"
done
