# shellcheck shell=bash
# Requires $p (resolve.sh) to be a readable regular file, and sets $size.
# (Sent as part of a bash -c script from the line after this header; @@NAME@@ are EXIT's codes.)
# ($p, and $size after require-file.sh, are set by the scripts put before this one.)
# (exit @@CODE@@ is a number once filled in; $size is for the scripts put after this one)
# shellcheck disable=SC2154,SC2242,SC2034

[ -e "$p" ] || exit @@MISSING@@
[ -d "$p" ] && exit @@DIRECTORY@@
[ -f "$p" ] || exit @@SPECIAL@@
[ -r "$p" ] || exit @@UNREADABLE@@
size=$(stat -c %s -- "$p")
