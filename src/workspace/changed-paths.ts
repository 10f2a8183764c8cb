/**
 * The bash function that brings the diff's index (GIT_INDEX_FILE) up to date with the working
 * tree, as `git add -A` does, over only the paths that changed when the box channel's watch can
 * say which (box-watch-program.ts): DRYDOCK_CHANGES names the paths that exist (a file of
 * NUL-ended paths, or "none"), DRYDOCK_GONE those gone, or DRYDOCK_CHANGES is "all". Unset (the
 * script ran as an exec, not through the channel), "all", or `add_changes whole` (the index was
 * just made from a commit, so every path may differ) look at everything.
 *
 * Paths gone from the root leave the index with `git rm --cached --ignore-unmatch`: one git's
 * index may not hold (a file that came and went) would stop `git add`, with 128, before it added
 * anything (the watch gives one gone from a directory as that directory). `git add
 * -A` with paths exits 1 when one of them is ignored, having added the others. Any other failure
 * falls back to git looking at everything. Pathspecs are literal: a file named `*` or `:(top)` is
 * a path, not a pattern.
 */
export const ADD_CHANGES = `
add_changes() {
  local changes=\${DRYDOCK_CHANGES:-all} gone=\${DRYDOCK_GONE:-none} added=0
  [ "\${1:-}" != whole ] || changes=all
  if [ "$changes" = all ]; then git add -A >/dev/null; return; fi
  if [ "$gone" != none ]; then
    GIT_LITERAL_PATHSPECS=1 git rm -r -q --cached --ignore-unmatch --pathspec-from-file="$gone" --pathspec-file-nul >/dev/null 2>&1 ||
      { git add -A >/dev/null; return; }
  fi
  [ "$changes" != none ] || return 0
  GIT_LITERAL_PATHSPECS=1 git add -A --pathspec-from-file="$changes" --pathspec-file-nul >/dev/null 2>&1 || added=$?
  [ "$added" -le 1 ] || git add -A >/dev/null
}
`;
