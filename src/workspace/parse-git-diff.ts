/**
 * A strict parser for the output of `git diff --binary --full-index -M`. The diff comes from the
 * box and may be hostile, so this parser accepts only the grammar git itself writes: every line
 * must be a file header, an extended header, a hunk line counted by its hunk header, or binary
 * patch data. Anything else (leading prose, a traditional `---`/`+++` patch without a
 * `diff --git` line, garbage between files) is refused, so no file can hide from the safety
 * checks and still be seen by `git apply`.
 */
import {
  malformedDiff,
  parseBinaryBlock,
  parseHunk,
  throwMalformedDiff,
  type HunkCounts,
  type Lines,
} from "./diff-hunks.js";
import { readQuoted, unquoteWhole } from "./git-quoted-path.js";

export type FileStatus = "added" | "deleted" | "modified" | "renamed" | "copied";

export interface FileChange {
  status: FileStatus;
  /** Path after the change, relative to the repository root; for a deletion, the path deleted. */
  path: string;
  /** Path before the change, for renames and copies. */
  oldPath?: string;
  /** Modes the diff declares (six octal digits); absent when the diff leaves them implicit. */
  oldMode?: string;
  newMode?: string;
  binary: boolean;
  similarity?: number;
  insertions: number;
  deletions: number;
  /** For a text change that replaces the whole file with one line (a symlink's target), that line. */
  singleNewLine?: string;
  /** 1-based line of the `diff --git` header, for messages. */
  line: number;
}

const EXTENDED: ReadonlyArray<[RegExp, keyof Extended]> = [
  [/^old mode ([0-7]{6})$/, "oldMode"],
  [/^new mode ([0-7]{6})$/, "newMode"],
  [/^deleted file mode ([0-7]{6})$/, "deletedMode"],
  [/^new file mode ([0-7]{6})$/, "newFileMode"],
  [/^similarity index (\d{1,3})%$/, "similarity"],
  [/^dissimilarity index (\d{1,3})%$/, "dissimilarity"],
  [/^rename from (.+)$/, "renameFrom"],
  [/^rename to (.+)$/, "renameTo"],
  [/^copy from (.+)$/, "copyFrom"],
  [/^copy to (.+)$/, "copyTo"],
  [/^index [0-9a-f]{7,64}\.\.[0-9a-f]{7,64}(?: ([0-7]{6}))?$/, "indexMode"],
];

interface Extended {
  oldMode?: string;
  newMode?: string;
  deletedMode?: string;
  newFileMode?: string;
  similarity?: string;
  dissimilarity?: string;
  renameFrom?: string;
  renameTo?: string;
  copyFrom?: string;
  copyTo?: string;
  indexMode?: string;
}
const utf8 = new TextDecoder("utf-8", { fatal: true });

/** The diff as bytes, whether given as text or bytes. */
export function diffBytes(diff: string | Uint8Array): Buffer {
  return typeof diff === "string" ? Buffer.from(diff, "utf8") : Buffer.from(diff);
}

/** Parses every file section of a git diff; throws `UnsafeDiffError` on anything git would not write. */
export function parseGitDiff(diff: string | Uint8Array): FileChange[] {
  // latin1 maps each byte to one character, so content in any encoding survives and paths can be
  // compared byte for byte before they are decoded.
  const lines = diffBytes(diff).toString("latin1").split("\n");
  if (lines.at(-1) === "") lines.pop();
  while (lines.length > 0 && lines.at(-1) === "") lines.pop();
  const changes: FileChange[] = [];
  let i = 0;
  while (i < lines.length) {
    if (!(lines[i] ?? "").startsWith("diff --git "))
      throw malformedDiff(i, lines, "expected a `diff --git` header");
    const { change, next } = parseSection(lines, i);
    changes.push(change);
    i = next;
  }
  return changes;
}

function parseSection(lines: Lines, start: number): { change: FileChange; next: number } {
  const ext: Extended = {};
  const seen = new Set<string>();
  let i = start + 1;
  for (; i < lines.length; i++) {
    const line = lines[i] ?? "";
    const hit = EXTENDED.find(([re]) => re.test(line));
    if (!hit) break;
    const [re, key] = hit;
    if (seen.has(key)) throw malformedDiff(i, lines, "the same header line twice in one file");
    seen.add(key);
    const value = re.exec(line)?.[1];
    if (value !== undefined) ext[key] = value;
  }

  let minus: string | null | undefined;
  let plus: string | null | undefined;
  let binary = false;
  const counts: HunkCounts = {
    insertions: 0,
    deletions: 0,
    context: 0,
    newLines: [],
    hunks: 0,
    wholeFile: false,
  };
  const line = lines[i];
  if (line?.startsWith("--- ")) {
    minus = fileLineName(line.slice(4), "a/", i, lines);
    const plusLine = lines[i + 1];
    if (!plusLine?.startsWith("+++ "))
      throw malformedDiff(i + 1, lines, "a `---` line must be followed by `+++`");
    plus = fileLineName(plusLine.slice(4), "b/", i + 1, lines);
    i += 2;
    if (!lines[i]?.startsWith("@@ ")) throw malformedDiff(i, lines, "expected a hunk header after `+++`");
    while (lines[i]?.startsWith("@@ ")) {
      i = parseHunk(lines, i, counts);
      counts.hunks++;
    }
  } else if (line === "GIT binary patch") {
    binary = true;
    i = parseBinaryBlock(lines, i + 1);
    if (/^(literal|delta) /.test(lines[i] ?? "")) i = parseBinaryBlock(lines, i);
  } else if (line?.startsWith("Binary files ") && line.endsWith(" differ")) {
    binary = true;
    i++;
  }
  if (i < lines.length && !(lines[i] ?? "").startsWith("diff --git ")) {
    throw malformedDiff(i, lines, "unexpected line in a file section");
  }

  const change = resolveNames(lines, start, ext, minus, plus);
  change.binary = binary;
  change.insertions = counts.insertions;
  change.deletions = counts.deletions;
  const only = counts.newLines[0];
  // Only a lone hunk with no context that starts at line 1 replaces the whole file: git anchors it
  // at both ends. Any other shape keeps lines of the old content that the diff does not show.
  if (
    counts.hunks === 1 &&
    counts.wholeFile &&
    counts.context === 0 &&
    counts.newLines.length === 1 &&
    only !== undefined
  ) {
    change.singleNewLine = Buffer.from(only, "latin1").toString("utf8");
  }
  return { change, next: i };
}

function resolveNames(
  lines: Lines,
  start: number,
  ext: Extended,
  minus: string | null | undefined,
  plus: string | null | undefined,
): FileChange {
  const header = headerCandidates((lines[start] ?? "").slice("diff --git ".length));
  if (header.length === 0) throw malformedDiff(start, lines, "the header does not name `a/<path> b/<path>`");
  const renamed = ext.renameFrom !== undefined || ext.renameTo !== undefined;
  const copied = ext.copyFrom !== undefined || ext.copyTo !== undefined;
  const added = ext.newFileMode !== undefined;
  const deleted = ext.deletedMode !== undefined;
  if ([renamed, copied, added, deleted].filter(Boolean).length > 1) {
    throw malformedDiff(start, lines, "a file cannot be added, deleted, renamed or copied at once");
  }
  if (
    (renamed && (ext.renameFrom === undefined || ext.renameTo === undefined)) ||
    (copied && (ext.copyFrom === undefined || ext.copyTo === undefined))
  ) {
    throw malformedDiff(start, lines, "a rename or copy needs both its `from` and `to` lines");
  }
  // git writes each mode in exactly one place; a diff that states one twice could mean two things.
  if ((added || deleted) && (ext.oldMode !== undefined || ext.newMode !== undefined)) {
    throw malformedDiff(start, lines, "an added or deleted file cannot also change mode");
  }
  if ((ext.oldMode === undefined) !== (ext.newMode === undefined)) {
    throw malformedDiff(start, lines, "`old mode` and `new mode` come together");
  }
  if (ext.indexMode !== undefined && (ext.oldMode !== undefined || added || deleted)) {
    throw malformedDiff(start, lines, "a mode on the `index` line next to another mode line");
  }
  if (minus !== undefined && ((minus === null) !== added || (plus === null) !== deleted)) {
    throw malformedDiff(start, lines, "`/dev/null` does not match the file's added/deleted headers");
  }

  const olds = [ext.renameFrom ?? ext.copyFrom, minus]
    .filter((n): n is string => typeof n === "string")
    .map((n) => quotedOrRaw(n, start, lines));
  const news = [ext.renameTo ?? ext.copyTo, plus]
    .filter((n): n is string => typeof n === "string")
    .map((n) => quotedOrRaw(n, start, lines));
  if (new Set(olds).size > 1)
    throw malformedDiff(
      start,
      lines,
      `the old path is named inconsistently (${olds.map(show).join(" vs ")})`,
    );
  if (new Set(news).size > 1)
    throw malformedDiff(
      start,
      lines,
      `the new path is named inconsistently (${news.map(show).join(" vs ")})`,
    );
  let oldName = olds[0];
  let newName = news[0];
  if (oldName === undefined && newName === undefined) {
    const same = header.find(([a, b]) => a === b);
    if (!same) throw malformedDiff(start, lines, "cannot tell which path the header names");
    [oldName, newName] = same;
  }
  const a = oldName ?? newName;
  const b = newName ?? oldName;
  if (!header.some(([ha, hb]) => ha === a && hb === b)) {
    throw malformedDiff(
      start,
      lines,
      `the header does not match the paths in the lines below it (${show(a ?? "")} -> ${show(b ?? "")})`,
    );
  }
  if (!renamed && !copied && a !== b)
    throw malformedDiff(start, lines, "old and new paths differ without a rename or copy");

  const kinds: Array<[boolean, FileStatus]> = [
    [added, "added"],
    [deleted, "deleted"],
    [renamed, "renamed"],
    [copied, "copied"],
  ];
  const status = kinds.find(([is]) => is)?.[1] ?? "modified";
  const change: FileChange = {
    status,
    path: decodePath(deleted ? (a ?? "") : (b ?? ""), start, lines),
    binary: false,
    insertions: 0,
    deletions: 0,
    line: start + 1,
  };
  if (renamed || copied) change.oldPath = decodePath(a ?? "", start, lines);
  const oldMode = ext.deletedMode ?? ext.oldMode ?? (added ? undefined : ext.indexMode);
  const newMode = ext.newFileMode ?? ext.newMode ?? (deleted ? undefined : ext.indexMode);
  if (oldMode !== undefined) change.oldMode = oldMode;
  if (newMode !== undefined) change.newMode = newMode;
  const similarity =
    ext.similarity ?? (ext.dissimilarity === undefined ? undefined : String(100 - Number(ext.dissimilarity)));
  if (similarity !== undefined) change.similarity = Number(similarity);
  return change;
}

/** `null` stands for /dev/null; otherwise the name with its `a/` or `b/` prefix removed (still quoted if it was). */
function fileLineName(rest: string, prefix: string, i: number, lines: Lines): string | null {
  // git ends a name with a tab when it holds a space; nothing may follow that tab.
  let name: string;
  if (rest.startsWith('"')) {
    const q = readQuoted(rest);
    if ("error" in q) throw malformedDiff(i, lines, q.error);
    if (rest.slice(q.end) !== "" && rest.slice(q.end) !== "\t")
      throw malformedDiff(i, lines, "text after a quoted path");
    name = rest.slice(0, q.end);
  } else {
    const tab = rest.indexOf("\t");
    if (tab !== -1 && tab !== rest.length - 1)
      throw malformedDiff(i, lines, "text after a tab in a path line");
    name = tab === -1 ? rest : rest.slice(0, tab);
  }
  if (name === "/dev/null") return null;
  return (
    stripPrefix(name, prefix) ??
    throwMalformedDiff(i, lines, `a path in this line must start with "${prefix}"`)
  );
}

function stripPrefix(name: string, prefix: string): string | undefined {
  if (name.startsWith('"' + prefix)) return '"' + name.slice(prefix.length + 1);
  if (name.startsWith(prefix)) return name.slice(prefix.length);
  return undefined;
}

/** Every way to read `a/X b/Y`, as byte strings with prefixes removed. */
function headerCandidates(rest: string): Array<[string, string]> {
  const pairs: Array<[string, string]> = [];
  const add = (a: string, b: string): void => {
    const pa = unquoteWhole(a);
    const pb = unquoteWhole(b);
    if (pa?.startsWith("a/") && pb?.startsWith("b/")) pairs.push([pa.slice(2), pb.slice(2)]);
  };
  for (let k = rest.indexOf(" "); k !== -1; k = rest.indexOf(" ", k + 1))
    add(rest.slice(0, k), rest.slice(k + 1));
  return pairs;
}

function quotedOrRaw(name: string, i: number, lines: Lines): string {
  return unquoteWhole(name) ?? throwMalformedDiff(i, lines, `cannot read the quoted path ${name}`);
}

function decodePath(bytes: string, i: number, lines: Lines): string {
  try {
    return utf8.decode(Buffer.from(bytes, "latin1"));
  } catch {
    throw malformedDiff(i, lines, `the path ${show(bytes)} is not valid UTF-8`);
  }
}

function show(bytes: string): string {
  return JSON.stringify(Buffer.from(bytes, "latin1").toString("utf8"));
}
