/** The kind of a directory entry, as `find -printf %y` reports it. */
export type EntryType = "file" | "directory" | "symlink" | "other";

/** One entry of a listing: a path (absolute under the root, or relative to it) and its type. */
export interface DirectoryEntry {
  readonly path: string;
  readonly type: EntryType;
}

/** Options for `formatDirectoryListing`; defaults two levels deep, at most 1,000 entries. */
export interface ListingOptions {
  readonly maxDepth?: number;
  readonly maxEntries?: number;
}

/**
 * The argv that lists `root` for `parseFindListing`: entries up to `maxDepth` levels deep (default
 * 2), hidden ones pruned, each printed as "type<TAB>relative path<NUL>" by GNU find.
 */
export function listingCommand(root: string, maxDepth = 2): string[] {
  const start = root.startsWith("-") ? `./${root}` : root;
  return [
    "find",
    start,
    "-mindepth",
    "1",
    "-maxdepth",
    String(maxDepth),
    "-name",
    ".*",
    "-prune",
    "-o",
    "-printf",
    "%y\\t%P\\0",
  ];
}

/** Parses the output of `listingCommand` into entries relative to the root. */
export function parseFindListing(output: string): DirectoryEntry[] {
  const entries: DirectoryEntry[] = [];
  for (const record of output.split("\0")) {
    const tab = record.indexOf("\t");
    if (tab === -1) continue;
    const path = record.slice(tab + 1);
    if (path.length === 0) continue;
    entries.push({ path, type: entryType(record.slice(0, tab)) });
  }
  return entries;
}

function entryType(letter: string): EntryType {
  switch (letter) {
    case "f":
      return "file";
    case "d":
      return "directory";
    case "l":
      return "symlink";
    default:
      return "other";
  }
}

/**
 * Renders a listing as full paths, one a line, sorted, directories ending in "/" and symlinks in
 * "@". Hidden entries (any part starting with ".") and entries deeper than `maxDepth` are skipped.
 */
export function formatDirectoryListing(
  root: string,
  entries: readonly DirectoryEntry[],
  options: ListingOptions = {},
): string {
  const maxDepth = options.maxDepth ?? 2;
  const maxEntries = options.maxEntries ?? 1_000;
  const base = root.length > 1 ? root.replace(/\/+$/, "") : root;
  const prefix = base === "/" ? "/" : `${base}/`;

  const kept = new Map<string, EntryType>();
  for (const entry of entries) {
    const relative = relativeTo(entry.path, base);
    if (relative === undefined) continue;
    const parts = relative.split("/");
    if (parts.length > maxDepth || parts.some((part) => part.startsWith("."))) continue;
    kept.set(relative, entry.type);
  }
  const sorted = [...kept.keys()].sort(comparePaths);
  const lines = sorted.slice(0, maxEntries).map((relative) => prefix + relative + marker(kept.get(relative)));
  const header = `${prefix} (${maxDepth} level${maxDepth === 1 ? "" : "s"} deep, hidden entries skipped)`;
  if (sorted.length === 0) return `${header}\n[no entries]`;
  const rest = sorted.length - lines.length;
  const note = rest > 0 ? `\n[${rest} more entries not shown; view a subdirectory to see them]` : "";
  return `${header}\n${lines.join("\n")}${note}`;
}

/** The path relative to `base`, or undefined when it lies outside it (or is the base itself). */
function relativeTo(path: string, base: string): string | undefined {
  let relative: string;
  if (path.startsWith("/")) {
    const prefix = base === "/" ? "/" : `${base}/`;
    if (!path.startsWith(prefix)) return undefined;
    relative = path.slice(prefix.length);
  } else {
    relative = path.startsWith("./") ? path.slice(2) : path;
  }
  relative = relative.replace(/\/+$/, "");
  if (
    relative.length === 0 ||
    relative.split("/").some((part) => part === ".." || part === "." || part === "")
  ) {
    return undefined;
  }
  return relative;
}

/** Orders by path segments, so a directory's children follow it before any sibling. */
function comparePaths(a: string, b: string): number {
  const pa = a.split("/");
  const pb = b.split("/");
  for (let i = 0; i < Math.min(pa.length, pb.length); i++) {
    const x = pa[i] as string;
    const y = pb[i] as string;
    if (x !== y) return x < y ? -1 : 1;
  }
  return pa.length - pb.length;
}

function marker(type: EntryType | undefined): string {
  if (type === "directory") return "/";
  if (type === "symlink") return "@";
  return "";
}
