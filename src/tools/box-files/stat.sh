# shellcheck shell=bash
# What is at $1 (after resolve.sh): its path, kind (file, directory, other, missing) and size.
# (Sent as part of a bash -c script from the line after this header; @@NAME@@ are EXIT's codes.)
# ($p, and $size after require-file.sh, are set by the scripts put before this one.)
# (k=file is the word file)
# shellcheck disable=SC2154,SC2209

if [ -f "$p" ]; then k=file; elif [ -d "$p" ]; then k=directory; elif [ -e "$p" ]; then k=other; else k=missing; fi
s=0; [ "$k" = missing ] || s=$(stat -c %s -- "$p")
printf '%s\0%s\0%s' "$p" "$k" "$s"
