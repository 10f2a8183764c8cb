# shellcheck shell=bash
# Removes the file at $1 (after resolve.sh and require-file.sh).
# (Sent as part of a bash -c script from the line after this header; @@NAME@@ are EXIT's codes.)
# ($p, and $size after require-file.sh, are set by the scripts put before this one.)
# shellcheck disable=SC2154

rm -f -- "$p" && printf '%s' "$p"
