# shellcheck shell=bash
# Lines $2 to $3 ("$" for the last) of the file at $1 (after resolve.sh and require-file.sh), at
# most $4 bytes of them, after its path, size and line count, NUL-ended.
# (Sent as part of a bash -c script from the line after this header; @@NAME@@ are EXIT's codes.)
# ($p, and $size after require-file.sh, are set by the scripts put before this one.)
# shellcheck disable=SC2154

total=$(wc -l < "$p")
[ "$size" -gt 0 ] && [ -n "$(tail -c 1 -- "$p" | tr -d '\0')" ] && total=$((total + 1))
printf '%s\0%s\0%s\0' "$p" "$size" "$total"
if [ "$3" = "$" ]; then sed -n "$2,\$p" -- "$p"; else sed -n "$2,$3p;$3q" -- "$p"; fi | head -c "$4"
