# shellcheck shell=bash
# The bytes $2 (offset) to $2 + $3 of the file at $1 (after resolve.sh, tools/box-files/): its real
# path and size NUL-ended, then those bytes (src/library/remote-box-script.ts).
# (Sent as part of a bash -c script from the line after this header; $p is resolve.sh's; exit
# @@CODE@@ is a number once filled in.)
# shellcheck disable=SC2154,SC2242

[ -e "$p" ] || exit @@MISSING@@
[ -d "$p" ] && exit @@DIRECTORY@@
[ -f "$p" ] || exit @@SPECIAL@@
[ -r "$p" ] || exit @@UNREADABLE@@
size=$(stat -c %s -- "$p")
printf '%s\0%s\0' "$p" "$size"
tail -c +$(($2 + 1)) -- "$p" | head -c "$3"
