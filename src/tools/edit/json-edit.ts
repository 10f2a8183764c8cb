import { type Node, parseTree } from "jsonc-parser";
import { InvalidArgumentError, LimitExceededError } from "../../util/errors.js";
import { assertNoDuplicates, type JsonDocument, parseJsonDocument } from "./json-document.js";
import { appendChild, removeChild, replaceValue } from "./json-splice.js";
import { checkJsonPath, type JsonMatch, jsonPathSegments, locate, queryJson } from "./json-path-query.js";
import { assertJsonValue } from "./json-value.js";

/** Most characters a view returns; narrow the path to see parts of bigger values. */
export const JSON_VIEW_MAX_CHARS = 256 * 1024;

/** What `jsonView` found. */
export interface JsonViewResult {
  readonly matches: { readonly path: string; readonly value: unknown }[];
  /** The matches as pretty JSON text: the value alone for one match, [{path, value}, ...] for several. */
  readonly text: string;
}

/** The new file text after an edit, and the normalised paths it changed. */
export interface JsonEditResult {
  readonly text: string;
  readonly changedPaths: string[];
}

/** The values `jsonPath` selects. A path that selects nothing is an error. */
export function jsonView(text: string, jsonPath: string): JsonViewResult {
  const document = parseJsonDocument(text);
  const found = matchesOrThrow(document, jsonPath);
  const matches = found.map(({ path, value }) => ({ path, value }));
  return { matches, text: renderMatches(matches, jsonPath) };
}

/** Renders matches one by one, stopping as soon as the view limit is passed. */
function renderMatches(matches: readonly { path: string; value: unknown }[], jsonPath: string): string {
  const tooBig = (size: string): LimitExceededError =>
    new LimitExceededError(
      `json_path ${jsonPath} selects ${size} characters of JSON, over the ${JSON_VIEW_MAX_CHARS} limit of a view; select less, e.g. one key ($.a.b), a slice ($.items[0:20]) or the keys only ($.a.*~)`,
    );
  if (matches.length === 1) {
    const text = JSON.stringify(matches[0]?.value, null, 2) ?? "null";
    if (text.length > JSON_VIEW_MAX_CHARS) throw tooBig(String(text.length));
    return text;
  }
  const parts: string[] = [];
  let size = 0;
  for (const match of matches) {
    const part = JSON.stringify(match, null, 2)
      .split("\n")
      .map((line) => `  ${line}`)
      .join("\n");
    size += part.length + 2;
    if (size > JSON_VIEW_MAX_CHARS) throw tooBig("more than " + String(JSON_VIEW_MAX_CHARS));
    parts.push(part);
  }
  return `[\n${parts.join(",\n")}\n]`;
}

/**
 * Replaces every node `jsonPath` selects with `value` (`$` replaces the whole document). Only the
 * selected values' text changes; the rest of the file stays byte for byte.
 */
export function jsonSet(text: string, jsonPath: string, value: unknown): JsonEditResult {
  assertJsonValue(value);
  const document = editable(text);
  const found = mutableMatches(document, jsonPath);
  let body = document.body;
  // Deepest first, so a node inside another selected node is replaced before its ancestor.
  for (const match of byDepthDescending(found)) {
    const node = nodeAt(body, match.pointer);
    if (node !== undefined) body = replaceValue(body, node, structuredClone(value), document.style);
  }
  return { text: withBom(document, body), changedPaths: found.map((m) => m.path) };
}

/**
 * Adds `value`: appended to each array `jsonPath` selects, or, when the path selects nothing and
 * ends in a plain key (`$.a.b`), set as that key on each object its parent path selects (an index
 * equal to an array's length appends to it). Only the last key is created, never a chain; an
 * existing non-array value is an error (use set to replace it).
 */
export function jsonAdd(text: string, jsonPath: string, value: unknown): JsonEditResult {
  assertJsonValue(value);
  const document = editable(text);
  checkJsonPath(jsonPath);
  const root = document.value;
  const existing = queryJson(root, jsonPath);
  const changedPaths: string[] = [];
  let body = document.body;
  if (existing.length > 0) {
    assertNotPropertyNames(root, existing);
    const notArray = existing.find((m) => !Array.isArray(m.value));
    if (notArray !== undefined) {
      throw new InvalidArgumentError(
        "json_path",
        `selects ${describeValue(notArray.value)} at ${notArray.path}; add appends to arrays or creates a missing key. Use set to replace an existing value. Nothing was changed`,
      );
    }
    for (const match of byDepthDescending(existing)) {
      const array = nodeAt(body, match.pointer) as Node;
      body = appendChild(body, array, structuredClone(value), document.style);
    }
    for (const match of existing) changedPaths.push(`${match.path}[${(match.value as unknown[]).length}]`);
    return { text: withBom(document, body), changedPaths };
  }

  const segments = jsonPathSegments(jsonPath);
  const key = segments[segments.length - 1] as string;
  if (segments.length < 2 || !isPlainKey(key)) {
    throw new InvalidArgumentError(
      "json_path",
      `${jsonPath} matches nothing, and add can only create a key named plainly at the end of the path (like $.a.b or $.a['new key']). Nothing was changed`,
    );
  }
  const parentPath = segments.slice(0, -1);
  const parents = queryJson(root, parentPath);
  if (parents.length === 0) {
    throw new InvalidArgumentError(
      "json_path",
      `${jsonPath} matches nothing, and neither does its parent; add creates only the last key. Add the parent first (e.g. add it with the value {}). Nothing was changed`,
    );
  }
  assertNotPropertyNames(root, parents);
  for (const parent of parents) {
    const target = parent.value;
    if (Array.isArray(target)) {
      if (key !== String(target.length)) {
        throw new InvalidArgumentError(
          "json_path",
          `index ${key} is past the end of the array at ${parent.path} (length ${target.length}); to append, add to the array's own path. Nothing was changed`,
        );
      }
    } else if (target === null || typeof target !== "object") {
      throw new InvalidArgumentError(
        "json_path",
        `the parent ${parent.path} is ${describeValue(target)}, which cannot hold a key. Nothing was changed`,
      );
    }
  }
  for (const parent of byDepthDescending(parents)) {
    const node = nodeAt(body, parent.pointer) as Node;
    const isArray = Array.isArray(parent.value);
    body = appendChild(body, node, structuredClone(value), document.style, isArray ? undefined : key);
  }
  for (const parent of parents) {
    changedPaths.push(
      Array.isArray(parent.value)
        ? `${parent.path}[${key}]`
        : `${parent.path}[${JSON.stringify(key).replace(/^"|"$/g, "'")}]`,
    );
  }
  return { text: withBom(document, body), changedPaths };
}

/** Deletes every node `jsonPath` selects (object keys removed, array items taken out). */
export function jsonRemove(text: string, jsonPath: string): JsonEditResult {
  const document = editable(text);
  const found = mutableMatches(document, jsonPath);
  if (found.some((m) => m.pointer === "")) {
    throw new InvalidArgumentError(
      "json_path",
      "selects the document root, which cannot be removed; use set with json_path $ to replace the whole document. Nothing was changed",
    );
  }
  let body = document.body;
  // Deepest first, and later array items before earlier ones, so every pointer stays valid.
  for (const match of byDepthDescending(found)) {
    const node = nodeAt(body, match.pointer);
    const holder = node?.parent?.type === "property" ? node.parent : node;
    const container = holder?.parent;
    if (holder === undefined || container === undefined) continue;
    body = removeChild(body, container, (container.children ?? []).indexOf(holder));
  }
  return { text: withBom(document, body), changedPaths: found.map((m) => m.path) };
}

function editable(text: string): JsonDocument {
  const document = parseJsonDocument(text);
  assertNoDuplicates(document);
  return document;
}

function withBom(document: JsonDocument, body: string): string {
  return document.bom ? `\ufeff${body}` : body;
}

/** The value node a JSON Pointer names in `body` (parsed afresh: earlier edits moved offsets). */
function nodeAt(body: string, pointer: string): Node | undefined {
  let node: Node | undefined = parseTree(body, [], { allowTrailingComma: true });
  if (pointer === "") return node;
  for (const raw of pointer.slice(1).split("/")) {
    const part = raw.replaceAll("~1", "/").replaceAll("~0", "~");
    if (node?.type === "array") node = node.children?.[Number(part)];
    else if (node?.type === "object") {
      node = node.children?.find((property) => property.children?.[0]?.value === part)?.children?.[1];
    } else return undefined;
  }
  return node;
}

function matchesOrThrow(document: JsonDocument, jsonPath: string): JsonMatch[] {
  checkJsonPath(jsonPath);
  const found = queryJson(document.value, jsonPath);
  if (found.length === 0) {
    throw new InvalidArgumentError(
      "json_path",
      `${jsonPath} matches nothing in the file; view a parent path (or $) to see what is there. Nothing was changed`,
    );
  }
  return found;
}

/** Matches of a set or remove, deduplicated, each checked to be a node rather than a key name. */
function mutableMatches(document: JsonDocument, jsonPath: string): JsonMatch[] {
  const found = matchesOrThrow(document, jsonPath);
  assertNotPropertyNames(document.value, found);
  const seen = new Set<string>();
  return found.filter((m) => !seen.has(m.pointer) && seen.add(m.pointer));
}

/** `~` selects key names, not nodes; editing through it would edit something else. */
function assertNotPropertyNames(root: unknown, matches: readonly JsonMatch[]): void {
  for (const match of matches) {
    const location = locate(root, match.pointer);
    if (location === undefined || !Object.is(location.value, match.value)) {
      throw new InvalidArgumentError(
        "json_path",
        "selects key names (~) or something else that is not a node in the document; only view can use it. Nothing was changed",
      );
    }
  }
}

function byDepthDescending(matches: readonly JsonMatch[]): JsonMatch[] {
  return [...matches].sort(compareForMutation);
}

/** Deeper nodes first; siblings grouped by container, higher array indices first. A total order. */
function compareForMutation(a: JsonMatch, b: JsonMatch): number {
  const depth = (m: JsonMatch): number => (m.pointer === "" ? 0 : m.pointer.split("/").length - 1);
  const byDepth = depth(b) - depth(a);
  if (byDepth !== 0) return byDepth;
  const cut = (p: string): [string, string] => [
    p.slice(0, p.lastIndexOf("/")),
    p.slice(p.lastIndexOf("/") + 1),
  ];
  const [parentA, lastA] = cut(a.pointer);
  const [parentB, lastB] = cut(b.pointer);
  if (parentA !== parentB) return parentA < parentB ? -1 : 1;
  const indexA = /^\d+$/.test(lastA) ? Number(lastA) : NaN;
  const indexB = /^\d+$/.test(lastB) ? Number(lastB) : NaN;
  if (!Number.isNaN(indexA) && !Number.isNaN(indexB)) return indexB - indexA;
  return lastA < lastB ? -1 : lastA > lastB ? 1 : 0;
}

/** A last path segment that names one key: no wildcard, recursion, filter, slice, union or type test. */
function isPlainKey(segment: string): boolean {
  return (
    segment.length > 0 &&
    !/^(\*|\.\.|\^|~|\$)$/.test(segment) &&
    !/^[?(@`]/.test(segment) &&
    !/[,:]/.test(segment)
  );
}

function describeValue(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  if (typeof value === "object") return "an object";
  return `a ${typeof value} (${JSON.stringify(value)?.slice(0, 40)})`;
}
