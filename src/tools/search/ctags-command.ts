import { InvalidArgumentError } from "../../util/errors.js";

/** Languages `code_search` maps kinds for, by their universal-ctags names. */
export const SEARCH_LANGUAGES = [
  "TypeScript",
  "JavaScript",
  "Python",
  "Go",
  "Rust",
  "Java",
  "C",
  "C++",
] as const;

/** Directories never worth indexing: version control, dependencies, caches. */
export const EXCLUDED_DIRECTORIES = [
  ".git",
  ".hg",
  ".svn",
  "node_modules",
  "bower_components",
  ".venv",
  "venv",
  "__pycache__",
  ".mypy_cache",
  ".pytest_cache",
  ".tox",
] as const;

/** Minified bundles and source maps: one huge line each, nothing to search for. */
const EXCLUDED_FILES = ["*.min.js", "*.min.mjs", "*.map"] as const;

/**
 * The ctags options shared by both commands: JSON lines with line, end, language, scope kind,
 * signature and typeref; no option files read (a repository's `.ctags.d` could otherwise
 * change them); symlinks not followed; unsorted, which is faster.
 */
function ctagsOptions(languages: readonly string[] | undefined): string[] {
  const options = [
    "ctags",
    "--options=NONE",
    "--output-format=json",
    "--fields=+nelpSt",
    "--extras=-p",
    "--sort=no",
    "--links=no",
    ...EXCLUDED_DIRECTORIES.map((dir) => `--exclude=${dir}`),
    ...EXCLUDED_FILES.map((pattern) => `--exclude=${pattern}`),
  ];
  if (languages !== undefined && languages.length > 0)
    options.push(`--languages=${languages.map(ctagsLanguage).join(",")}`);
  return options;
}

/** The argv that indexes every file under `root` (universal-ctags 5.9), writing JSON lines to stdout. */
export function ctagsCommand(root: string, languages?: readonly string[]): string[] {
  return [...ctagsOptions(languages), "-R", "-f", "-", safeOperand(root)];
}

/**
 * An argv (`sh -c`) that indexes only the files under `root` holding `identifier` as a whole
 * word: grep finds them, ctags reads their names from stdin. Much faster on a big repository;
 * files whose names hold a newline are missed.
 */
export function ctagsForIdentifierCommand(
  root: string,
  identifier: string,
  languages?: readonly string[],
): string[] {
  const word = searchWord(identifier);
  const grep = [
    "grep",
    "-rlIwF",
    ...EXCLUDED_DIRECTORIES.map((dir) => `--exclude-dir=${dir}`),
    ...EXCLUDED_FILES.map((pattern) => `--exclude=${pattern}`),
    "-e",
    word,
    "--",
    root,
  ];
  const ctags = [...ctagsOptions(languages), "-L", "-", "-f", "-"];
  return ["sh", "-c", `${grep.map(shellQuote).join(" ")} | ${ctags.map(shellQuote).join(" ")}`];
}

/** The word a file must contain to define `identifier`: the part after the last `.`, `::` or `#`. */
export function searchWord(identifier: string): string {
  const parts = identifier.trim().split(/::|[.#]/);
  return parts[parts.length - 1] ?? identifier;
}

/** Quotes one word for a POSIX shell. */
export function shellQuote(word: string): string {
  return /^[\w@%+=:,./-]+$/.test(word) ? word : `'${word.replaceAll("'", `'\\''`)}'`;
}

function ctagsLanguage(name: string): string {
  const found = SEARCH_LANGUAGES.find((language) => language.toLowerCase() === name.trim().toLowerCase());
  if (found === undefined) {
    throw new InvalidArgumentError(
      "languages",
      `${JSON.stringify(name)} is not one of ${SEARCH_LANGUAGES.join(", ")}`,
    );
  }
  return found;
}

/** ctags has no `--`; a path starting with "-" would be read as an option. */
function safeOperand(path: string): string {
  if (path.length === 0) throw new InvalidArgumentError("path", "is empty; give the directory to search");
  return path.startsWith("-") ? `./${path}` : path;
}
