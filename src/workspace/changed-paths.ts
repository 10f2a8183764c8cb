/**
 * The bash function that brings the diff's index (GIT_INDEX_FILE) up to date with the working
 * tree, as `git add -A` does, over only the paths that changed when the box channel's watch can
 * say which (DRYDOCK_CHANGES, box-watch-program.ts): a file of NUL-ended paths, "none", or "all".
 * Unset (the script ran as an exec, not through the channel), "all", or `add_changes whole` (the
 * index was just made from a commit, so every path may differ) look at everything.
 *
 * `git add -A` with paths exits 1 when one of them is ignored, having added the others; it stops
 * with 128 before adding anything when one matches nothing (a path that came and went between
 * the watch's look and git's), and then git looks at everything instead. Pathspecs are literal:
 * a file named `*` or `:(top)` is a path, not a pattern.
 */
export const ADD_CHANGES = `
add_changes() {
  local changes=\${DRYDOCK_CHANGES:-all} added=0
  [ "\${1:-}" != whole ] || changes=all
  case "$changes" in
    none) ;;
    all) git add -A >/dev/null ;;
    *)
      GIT_LITERAL_PATHSPECS=1 git add -A --pathspec-from-file="$changes" --pathspec-file-nul >/dev/null 2>&1 || added=$?
      [ "$added" -le 1 ] || git add -A >/dev/null ;;
  esac
}
`;
