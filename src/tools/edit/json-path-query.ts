import { JSONPath } from "jsonpath-plus";
import { InvalidArgumentError } from "../../util/errors.js";
import { SafeFilterScript } from "./filter-expression.js";

/** Longest JSONPath accepted. */
export const MAX_JSON_PATH_CHARS = 1_000;

/** One node a JSONPath selected. */
export interface JsonMatch {
  /** Normalised JSONPath of the node, e.g. `$['scripts']['test']`. */
  readonly path: string;
  /** JSON Pointer of the node (RFC 6901), "" for the root. */
  readonly pointer: string;
  readonly value: unknown;
}

interface RawResult {
  readonly path: string;
  readonly pointer: string;
  readonly value: unknown;
}

/**
 * Checks that `jsonPath` is a JSONPath we can trust to mean what it says: it starts at `$` and
 * its brackets, parentheses and quotes are balanced (jsonpath-plus reads unbalanced ones loosely).
 */
export function checkJsonPath(jsonPath: string): void {
  const example = "e.g. $.scripts.test, $.items[0], $..name or $.items[?(@.id == 3)]";
  if (jsonPath.trim().length === 0)
    throw new InvalidArgumentError("json_path", `is empty; give a JSONPath, ${example}`);
  if (jsonPath.length > MAX_JSON_PATH_CHARS) {
    throw new InvalidArgumentError("json_path", `is longer than ${MAX_JSON_PATH_CHARS} characters`);
  }
  if (!jsonPath.startsWith("$")) {
    throw new InvalidArgumentError("json_path", `must start with $ (the document root), ${example}`);
  }
  if (/\[\?(?!\()/.test(jsonPath)) {
    throw new InvalidArgumentError(
      "json_path",
      "writes a filter without parentheses; write it as [?(@.price < 10)]",
    );
  }
  const closers: string[] = [];
  let quote: string | undefined;
  for (let i = 0; i < jsonPath.length; i++) {
    const c = jsonPath[i] as string;
    if (quote !== undefined) {
      if (c === "\\") i++;
      else if (c === quote) quote = undefined;
      continue;
    }
    if (c === "'" || c === '"') quote = c;
    else if (c === "[") {
      if (jsonPath[i + 1] === "]")
        throw new InvalidArgumentError("json_path", `has empty brackets at character ${i + 1}; ${example}`);
      closers.push("]");
    } else if (c === "(") closers.push(")");
    else if (c === "]" || c === ")") {
      if (closers.pop() !== c)
        throw new InvalidArgumentError("json_path", `has an unmatched '${c}' at character ${i + 1}`);
    }
  }
  if (quote !== undefined) throw new InvalidArgumentError("json_path", `has an unclosed ${quote} quote`);
  if (closers.length > 0)
    throw new InvalidArgumentError("json_path", `has an unclosed '${closers[0] === "]" ? "[" : "("}'`);
}

/** The segments of a JSONPath as jsonpath-plus reads them, e.g. ["$", "..", "name"]. */
export function jsonPathSegments(jsonPath: string): string[] {
  return withCleanCache(() => JSONPath.toPathArray(jsonPath));
}

/**
 * Every node of `document` that `jsonPath` selects, in document order. Filter and script
 * expressions run in `SafeFilterScript`, never as JavaScript. `jsonPath` may be a segment array
 * from `jsonPathSegments`.
 */
export function queryJson(document: unknown, jsonPath: string | readonly string[]): JsonMatch[] {
  const segments = typeof jsonPath === "string" ? null : jsonPath;
  if (segments !== null ? segments.length === 1 && segments[0] === "$" : jsonPath === "$") {
    return [{ path: "$", pointer: "", value: document }];
  }
  // jsonpath-plus treats a falsy root as no document at all; a primitive has no children anyway.
  if (document === null || typeof document !== "object") return [];
  const path = segments !== null ? [...segments] : (jsonPath as string);
  let results: RawResult[];
  try {
    results = withCleanCache(
      () =>
        JSONPath({
          path,
          json: document,
          resultType: "all",
          wrap: true,
          eval: SafeFilterScript,
          ignoreEvalErrors: false,
        }) as RawResult[],
    );
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    throw new InvalidArgumentError("json_path", `could not be evaluated: ${readable(message)}`);
  }
  return results.map(({ path: p, pointer, value }) => ({ path: p, pointer, value }));
}

/** Where a JSON Pointer leads: the node, its container and its key (null for the root). */
export interface JsonLocation {
  readonly parent: Record<string, unknown> | unknown[] | null;
  readonly key: string | number | null;
  readonly value: unknown;
}

/** Follows a JSON Pointer through own properties only; undefined when it leads nowhere. */
export function locate(document: unknown, pointer: string): JsonLocation | undefined {
  if (pointer === "") return { parent: null, key: null, value: document };
  const parts = pointer
    .slice(1)
    .split("/")
    .map((part) => part.replaceAll("~1", "/").replaceAll("~0", "~"));
  let node: unknown = document;
  let parent: JsonLocation["parent"] = null;
  let key: string | number | null = null;
  for (const part of parts) {
    if (Array.isArray(node)) {
      if (!/^(0|[1-9]\d*)$/.test(part) || Number(part) >= node.length) return undefined;
      parent = node;
      key = Number(part);
      node = node[key];
    } else if (node !== null && typeof node === "object") {
      if (!Object.hasOwn(node, part)) return undefined;
      parent = node as Record<string, unknown>;
      key = part;
      node = (node as Record<string, unknown>)[part];
    } else {
      return undefined;
    }
  }
  return { parent, key, value: node };
}

/**
 * jsonpath-plus caches parsed paths and scripts in one global object that never shrinks; drop
 * what a call added so a long-running server does not grow with every distinct path.
 */
function withCleanCache<T>(run: () => T): T {
  const cache = JSONPath.cache as Record<string, unknown>;
  const before = new Set(Object.keys(cache));
  try {
    return run();
  } finally {
    for (const key of Object.keys(cache)) if (!before.has(key)) delete cache[key];
  }
}

/** jsonpath-plus's messages name its internal variables; put the user's names back. */
function readable(message: string): string {
  return message
    .replace(/^jsonPath: /, "")
    .replaceAll("_$_parentProperty", "@parentProperty")
    .replaceAll("_$_parent", "@parent")
    .replaceAll("_$_property", "@property")
    .replaceAll("_$_root", "@root")
    .replaceAll("_$_path", "@path")
    .replaceAll("_$_v", "@");
}
