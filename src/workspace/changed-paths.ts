/**
 * The bash function that brings the diff's index (GIT_INDEX_FILE) up to date with the working
 * tree, as `git add -A` does, over only the paths that changed when the box channel's watch can
 * say which (box-agent/drydock_box/watch.py): DRYDOCK_CHANGES names the paths that exist (a file of
 * NUL-ended paths, or "none"), DRYDOCK_GONE those gone, or DRYDOCK_CHANGES is "all". Unset (the
 * script ran as an exec, not through the channel), "all", or `add_changes whole` (the index was
 * just made from a commit, so every path may differ) look at everything.
 *
 * For named paths, git itself says which entries are under them: `git ls-files --cached
 * --others --exclude-standard` lists the index's entries there and the files git add -A would add
 * (a repository inside the workspace as its directory, with a slash), and one `git update-index
 * --add --remove --replace` takes each as add -A does: changed ones hashed (by their stat data,
 * as add -A), gone ones removed, a file that became a directory or the other way replaced (the
 * index's entries go first, so one that became a directory leaves before the files in it come).
 * These two gits take about half the time of the `git rm --cached` and `git add -A` with the
 * paths they replace, at 10,000 files: add's own walk over every entry of the index, and a second
 * read and write of the whole index, are gone. Pathspecs are literal: a file named `*` or
 * `:(top)` is a path, not a pattern; update-index reads paths, never patterns. Any failure (a path
 * beyond a symbolic link, a file git cannot store) leaves the index as it was (update-index writes
 * it whole or not at all) and falls back to git looking at everything.
 */
import { boxScript } from "../util/box-script.js";
export const ADD_CHANGES = boxScript("workspace/add-changes.sh");
