# shellcheck shell=bash
# Writes stdin ($4 bytes) to $1 (after resolve.sh) through a temporary file in the same
# directory renamed into place, so a failed write leaves the old content whole; an existing
# file keeps its mode, $3 sets one; $2 = 1 makes the missing directories.
# (Sent as part of a bash -c script from the line after this header; @@NAME@@ are EXIT's codes.)
# ($p, and $size after require-file.sh, are set by the scripts put before this one.)
# (exit @@CODE@@ is a number once filled in)
# shellcheck disable=SC2154,SC2242

[ -d "$p" ] && exit @@DIRECTORY@@
[ -e "$p" ] && [ ! -f "$p" ] && exit @@SPECIAL@@
d=$(dirname -- "$p")
if [ "$2" = 1 ] && [ ! -e "$d" ]; then mkdir -p -- "$d" || exit 1; fi
[ -d "$d" ] || { printf '%s' "$d" >&2; exit @@NO_PARENT@@; }
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
