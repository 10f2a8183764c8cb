/**
 * Untracked dependency trees: directories a package manager or build tool fills (`node_modules`, a
 * virtualenv, Cargo's `target`), neither tracked nor ignored, which copy-in leaves out of the box
 * unless asked (`includeUntrackedDependencies`). One such tree can hold tens of thousands of files
 * and turn a start of seconds into a minute; the box installs its own when it needs one.
 *
 * The rule works on the untracked list copy-in already has (git's `ls-files --others
 * --exclude-standard`), so it reads no file and follows no link: a directory is a dependency tree
 * when its name is one below and, where the name alone is ambiguous, the tool's own marker file
 * sits in it, untracked too. The outermost such directory wins. Tracked files are never in the
 * untracked list, so a tracked file inside such a directory is always copied. Pure.
 *
 * A repository chooses its own file names, so a hostile one can make a real source directory look
 * like a dependency tree (name it `node_modules`, or add a `pyvenv.cfg`): the box then lacks it,
 * which harms nothing on the host. The rule only ever removes paths from what would be copied.
 *
 * Hand-written: the lists that exist (github/gitignore's templates) are ignore patterns for a
 * person to adopt, by name alone; this rule needs the marker checks and must stay this small.
 */

/** Names that are dependency or cache trees by themselves, and names that are only with a marker inside. */
const BY_NAME: ReadonlyMap<string, readonly string[] | undefined> = new Map<
  string,
  readonly string[] | undefined
>([
  ["node_modules", undefined], // npm, yarn, pnpm
  ["bower_components", undefined],
  ["__pycache__", undefined],
  [".tox", undefined],
  [".nox", undefined],
  [".mypy_cache", undefined],
  [".pytest_cache", undefined],
  [".ruff_cache", undefined],
  [".gradle", undefined],
  // A Python virtual environment: `python -m venv` and virtualenv write pyvenv.cfg at its top.
  [".venv", ["pyvenv.cfg"]],
  ["venv", ["pyvenv.cfg"]],
  // Cargo writes CACHEDIR.TAG into its target directory (the Cache Directory Tagging Specification).
  ["target", ["CACHEDIR.TAG"]],
  // Go's `go mod vendor` writes modules.txt; Composer writes composer/installed.json.
  ["vendor", ["modules.txt", "composer/installed.json"]],
]);

/** A directory left out of the box. */
export interface DependencyTree {
  /** Repository-relative, with a trailing slash: "web/node_modules/". */
  dir: string;
  /** The untracked files under it. */
  files: number;
}

export interface DependencySplit {
  /** The untracked paths still to copy. */
  kept: string[];
  /** The untracked paths left out (inside `trees`). */
  leftOut: string[];
  /** The outermost dependency trees, by path. */
  trees: DependencyTree[];
}

/**
 * A path a gitignore pattern cannot name (a line break ends the pattern) is never left out: the
 * box's exclude file must be able to keep what the agent installs there out of the diff.
 */
const UNNAMEABLE = /[\n\r]/;

/** Splits `untracked` (repository-relative paths, "/"-separated) into what to copy and the dependency trees to leave out. */
export function splitDependencyTrees(untracked: readonly string[]): DependencySplit {
  const listed = new Set(untracked);
  // Per directory prefix: whether it is a dependency tree (decided once).
  const decided = new Map<string, boolean>();
  const isTree = (prefix: string, name: string): boolean => {
    let known = decided.get(prefix);
    if (known === undefined) {
      const markers = BY_NAME.get(name);
      known =
        !UNNAMEABLE.test(prefix) &&
        (markers === undefined || markers.some((marker) => listed.has(`${prefix}/${marker}`)));
      decided.set(prefix, known);
    }
    return known;
  };
  const kept: string[] = [];
  const leftOut: string[] = [];
  const counts = new Map<string, number>();
  for (const path of untracked) {
    const parts = path.split("/");
    let tree: string | undefined;
    // The last part is the file itself: only the directories above it are looked at.
    for (let i = 0; i < parts.length - 1 && tree === undefined; i++) {
      if (!BY_NAME.has(parts[i]!)) continue;
      const prefix = parts.slice(0, i + 1).join("/");
      if (isTree(prefix, parts[i]!)) tree = `${prefix}/`;
    }
    if (tree === undefined) {
      kept.push(path);
    } else {
      leftOut.push(path);
      counts.set(tree, (counts.get(tree) ?? 0) + 1);
    }
  }
  const trees = [...counts]
    .map(([dir, files]) => ({ dir, files }))
    .sort((a, b) => (a.dir < b.dir ? -1 : a.dir > b.dir ? 1 : 0));
  return { kept, leftOut, trees };
}

/**
 * The gitignore line that names exactly the directory `dir` ("a/node_modules/") from the top of
 * the repository: anchored, glob characters and backslashes escaped. The box adds these to its
 * exclude file, so what the agent installs there stays out of the diff, as on the host it would
 * have come from no snapshot either.
 */
export function excludeLine(dir: string): string {
  return `/${dir.replace(/[\\*?[\]]/g, (ch) => `\\${ch}`)}`;
}
