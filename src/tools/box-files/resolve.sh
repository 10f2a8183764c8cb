# shellcheck shell=bash
# Resolves "$1" into $p, symlinks followed in the box, and refuses a real path outside /workspace.
# The start of every script here that takes a path (src/tools/box-file-scripts.ts puts it first).
# (Sent as part of a bash -c script from the line after this header; @@NAME@@ are EXIT's codes.)
# (exit @@CODE@@ is a number once filled in)
# shellcheck disable=SC2242

set -u
p=$(realpath -m -- "$1" 2>&1) || { printf '%s' "$p" >&2; exit @@UNRESOLVABLE@@; }
case "$p" in /workspace|/workspace/*) ;; *) printf '%s' "$p" >&2; exit @@OUTSIDE@@ ;; esac
