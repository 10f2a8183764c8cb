# shellcheck shell=bash
# add_changes: brings the diff's index (GIT_INDEX_FILE) up to date with the working tree, over
# the paths the box's watch says changed (src/workspace/changed-paths.ts says how). A bash
# function, put into the scripts that update that index; what follows this header is sent.
# (a= b= sets each to empty, on purpose)
# shellcheck disable=SC1007

add_changes() {
  local changes=${DRYDOCK_CHANGES:-all} gone=${DRYDOCK_GONE:-none} named=() listed=()
  [ "${1:-}" != whole ] || changes=all
  if [ "$changes" = all ]; then git add -A >/dev/null; return; fi
  [ "$gone" = none ] || mapfile -d '' -t named <"$gone"
  [ "$changes" = none ] || mapfile -d '' -t -O "${#named[@]}" named <"$changes"
  [ "${#named[@]}" -gt 0 ] || return 0
  mapfile -d '' -t listed < <(GIT_LITERAL_PATHSPECS=1 git ls-files -z -t --cached --others --exclude-standard -- "${named[@]}" 2>/dev/null)
  wait $! || { git add -A >/dev/null; return; }
  [ "${#listed[@]}" -gt 0 ] || return 0
  # The index's entries first ("H path"; "S" skip-worktree), then the files to add ("? path"): an
  # entry that is now a directory leaves before the files in it come.
  local entry held=() new=()
  for entry in "${listed[@]}"; do
    case "$entry" in ("? "*) new+=("${entry:2}") ;; (*) held+=("${entry:2}") ;; esac
  done
  printf '%s\0' "${held[@]}" "${new[@]%/}" | git update-index --add --remove --replace -z --stdin >/dev/null 2>&1 ||
    git add -A >/dev/null
}
