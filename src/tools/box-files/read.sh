# shellcheck shell=bash
# The file at $1 (after resolve.sh and require-file.sh): its path and size, NUL-ended, then at
# most $2 of its bytes.
# (Sent as part of a bash -c script from the line after this header; @@NAME@@ are EXIT's codes.)
# ($p, and $size after require-file.sh, are set by the scripts put before this one.)
# shellcheck disable=SC2154

printf '%s\0%s\0' "$p" "$size"
head -c "$2" -- "$p"
