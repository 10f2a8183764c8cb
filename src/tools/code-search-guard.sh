# shellcheck shell=bash
# code_search's guard (src/tools/code-search-tool.ts): checks the search root $1 (after resolve.sh,
# tools/box-files/), then runs the rest of the arguments (the ctags pipeline).
# (Sent as part of a bash -c script from the line after this header; $p is resolve.sh's; exit
# @@CODE@@ is a number once filled in.)
# shellcheck disable=SC2154,SC2242

[ -e "$p" ] || exit @@MISSING@@
shift
exec "$@"
