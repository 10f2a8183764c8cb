#!/bin/sh
# What an image must hold to serve as a box (src/sandbox/image-requirements.ts): prints
# "ok|missing <TAB> name <TAB> detail" for each requirement, with sh builtins only (bash may be
# what is missing). Sent as `sh -c` from the line after this header.
# (a= b= sets each to empty, on purpose)
# shellcheck disable=SC1007

have() {
  name=$1; shift; missing=; found=
  for p in "$@"; do
    if where=$(command -v "$p" 2>/dev/null); then found="$found $where"; else missing="$missing $p"; fi
  done
  if [ -n "$missing" ]; then echo "missing	$name	not found:$missing"
  elif [ $# -eq 1 ]; then echo "ok	$name	${found# }"
  else echo "ok	$name	all $# found"; fi
}
have bash bash
have coreutils cat head tail mkdir rm cp mv mktemp realpath dirname basename stat chmod cut wc tr sort seq timeout nohup id sleep stty printf
have "grep, sed, find" grep sed find
have procps pgrep pkill
have git git
have tar tar
have python3 python3
if ! command -v ctags >/dev/null 2>&1; then
  echo "missing	universal-ctags	no ctags on PATH"
else
  version=$(ctags --version 2>/dev/null); features=$(ctags --list-features 2>/dev/null)
  case "$version" in
    *"Universal Ctags"*)
      case "$features" in
        *json*) echo "ok	universal-ctags	${version%%
*}" ;;
        *) echo "missing	universal-ctags	ctags was built without JSON output" ;;
      esac ;;
    *) echo "missing	universal-ctags	ctags is not universal-ctags: ${version%%
*}" ;;
  esac
fi
have aider aider
user=
while IFS=: read -r n _ uid _ _ home _; do
  if [ "$uid" = 1000 ]; then user="$n (home $home)"; fi
done < /etc/passwd
if [ -n "$user" ]; then echo "ok	user 1000	$user"; else echo "missing	user 1000	no user with uid 1000 in /etc/passwd"; fi
