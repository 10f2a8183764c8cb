# shellcheck shell=bash
# The directory at $1 (after resolve.sh), $2 levels deep, hidden entries left out: its path,
# then "<type>\t<path>" NUL-ended per entry.
# (Sent as part of a bash -c script from the line after this header; @@NAME@@ are EXIT's codes.)
# ($p, and $size after require-file.sh, are set by the scripts put before this one.)
# (exit @@CODE@@ is a number once filled in)
# shellcheck disable=SC2154,SC2242

[ -e "$p" ] || exit @@MISSING@@
[ -d "$p" ] || exit @@NOT_DIRECTORY@@
printf '%s\0' "$p"
find "$p" -mindepth 1 -maxdepth "$2" -name '.*' -prune -o -printf '%y\t%P\0'
