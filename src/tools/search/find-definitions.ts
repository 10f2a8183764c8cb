import { InvalidArgumentError } from "../../util/errors.js";
import type { Definition } from "./ctags-json.js";
import { isCallable, isClassLike, isFunction, isMethod } from "./definition-kinds.js";

/** The searches `code_search` offers. */
export type SearchCommand = "search_function" | "search_class" | "search_class_method";

/** Definitions found, in path and line order, and a hint when there were none. */
export interface DefinitionSearch {
  readonly matches: Definition[];
  /** How many matched before `maxResults` cut the list. */
  readonly total: number;
  /** Set when nothing matched: what was found instead, or what to try next. */
  readonly hint?: string;
}

/** Options for `findDefinitions`; at most 50 results by default. */
export interface FindOptions {
  readonly maxResults?: number;
}

const MAX_IDENTIFIER_CHARS = 200;

/**
 * Picks the definitions `command` asks for. `search_function` finds functions that are not
 * methods; `search_class` finds classes, structs, interfaces, traits, enums and impls;
 * `search_class_method` finds methods, given as `method` or `Class.method` (also `Class::method`
 * or `Class#method`; the class may be qualified, e.g. `geo::Circle.area`). The other two accept a
 * qualified name too (`F.Inner`, `geo::Circle`, `NS.helper`), matched against the enclosing scope.
 */
export function findDefinitions(
  definitions: readonly Definition[],
  command: SearchCommand,
  identifier: string,
  options: FindOptions = {},
): DefinitionSearch {
  const wanted = identifier.trim();
  if (wanted.length === 0 || wanted.length > MAX_IDENTIFIER_CHARS || /\s/.test(wanted)) {
    throw new InvalidArgumentError(
      "identifier",
      `must be one name of 1 to ${MAX_IDENTIFIER_CHARS} characters without spaces, e.g. parseConfig, UserService or UserService.save`,
    );
  }
  const { qualifier, name } = splitQualified(wanted, command);
  const accepts =
    command === "search_function" ? isFunction : command === "search_class" ? isClassLike : isMethod;
  const all = definitions.filter(
    (d) => d.name === name && accepts(d) && (qualifier === undefined || scopeMatches(d.scope, qualifier)),
  );
  const matches = dedupe(all).sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : a.line - b.line));
  const max = options.maxResults ?? 50;
  const result = { matches: matches.slice(0, max), total: matches.length };
  if (matches.length > 0) return result;
  return { ...result, hint: hintFor(definitions, command, wanted, name) };
}

function splitQualified(identifier: string, command: SearchCommand): { qualifier?: string; name: string } {
  const at = Math.max(
    identifier.lastIndexOf("."),
    identifier.lastIndexOf("::") + 1,
    identifier.lastIndexOf("#"),
  );
  if (at <= 0) return { name: identifier };
  const separator = identifier[at] === ":" ? 1 : 0;
  const qualifier = identifier.slice(0, at - separator).replace(/[.#:]+$/, "");
  const name = identifier.slice(at + 1);
  if (name.length === 0 || qualifier.length === 0) {
    throw new InvalidArgumentError(
      "identifier",
      `${JSON.stringify(identifier)} is not a name; use ${command === "search_class_method" ? "Class.method or method" : "a plain name"}`,
    );
  }
  return { qualifier, name };
}

/** True when `scope` is `qualifier` or ends with it, whatever separators (`.`, `::`) each uses. */
function scopeMatches(scope: string | undefined, qualifier: string): boolean {
  if (scope === undefined) return false;
  const have = scope.split(/::|[.#]/);
  const want = qualifier.split(/::|[.#]/);
  if (want.length > have.length) return false;
  return want.every((part, i) => have[have.length - want.length + i] === part);
}

function dedupe(definitions: readonly Definition[]): Definition[] {
  const seen = new Set<string>();
  return definitions.filter((d) => {
    const key = `${d.path}\0${d.line}\0${d.name}\0${d.kind}\0${d.scope ?? ""}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

function hintFor(
  definitions: readonly Definition[],
  command: SearchCommand,
  identifier: string,
  name: string,
): string {
  const named = definitions.filter((d) => d.name === name);
  const describe = (list: readonly Definition[]): string =>
    list
      .slice(0, 3)
      .map((d) => `${d.scope !== undefined ? `${d.scope}.` : ""}${d.name} (${d.kind}) at ${d.path}:${d.line}`)
      .join(", ");
  const methods = named.filter(isMethod);
  const functions = named.filter(isFunction);
  const classes = named.filter(isClassLike);
  if (command !== "search_class_method" && methods.length > 0) {
    return `no ${command === "search_function" ? "function" : "class"} named ${identifier}, but ${methods.length} method(s): ${describe(methods)}. Use search_class_method`;
  }
  if (command === "search_class_method" && methods.length > 0) {
    return `no method ${identifier}; methods named ${name} belong to other classes: ${describe(methods)}`;
  }
  if (command !== "search_function" && functions.length > 0) {
    return `no ${command === "search_class" ? "class" : "method"} named ${identifier}, but ${functions.length} function(s): ${describe(functions)}. Use search_function`;
  }
  if (command !== "search_class" && classes.length > 0) {
    return `no ${command === "search_function" ? "function" : "method"} named ${identifier}, but ${classes.length} class-like definition(s): ${describe(classes)}. Use search_class`;
  }
  const other = named.filter((d) => !isCallable(d) && !isClassLike(d));
  if (other.length > 0) return `${name} is defined, but not as a ${commandNoun(command)}: ${describe(other)}`;
  return `no definition named ${name} was found; check the spelling and the path, or search the text with bash (grep -rnw ${name} .)`;
}

function commandNoun(command: SearchCommand): string {
  return command === "search_function" ? "function" : command === "search_class" ? "class" : "method";
}
