import type { Definition } from "./ctags-json.js";

/** ctags kinds that define something callable, per language (kind names differ between parsers). */
const CALLABLE_KINDS: Readonly<Record<string, readonly string[]>> = {
  TypeScript: ["function", "method", "generator"],
  JavaScript: ["function", "method", "generator", "getter", "setter"],
  Python: ["function", "member"],
  Go: ["func", "methodSpec"],
  Rust: ["function", "method"],
  Java: ["method"],
  C: ["function"],
  "C++": ["function"],
};
const DEFAULT_CALLABLE_KINDS = ["function", "method", "func", "subroutine", "procedure", "singletonMethod"];

/** ctags kinds that define a class or something that plays its part. */
const CLASS_KINDS: Readonly<Record<string, readonly string[]>> = {
  TypeScript: ["class", "interface", "enum"],
  JavaScript: ["class"],
  Python: ["class"],
  Go: ["struct", "interface", "type"],
  Rust: ["struct", "enum", "interface", "implementation"],
  Java: ["class", "interface", "enum", "annotation", "record"],
  C: ["struct", "union", "enum"],
  "C++": ["class", "struct", "union", "enum"],
};
const DEFAULT_CLASS_KINDS = ["class", "struct", "interface", "trait", "enum", "union", "record", "object"];

/** Scope kinds that make a callable a method: it belongs to a type, not a module or function. */
const TYPE_SCOPE_KINDS = new Set([
  "class",
  "struct",
  "interface",
  "implementation",
  "trait",
  "enum",
  "union",
  "record",
  "type",
  "object",
]);

/** Kinds that are methods wherever they appear. */
const METHOD_KINDS = new Set(["method", "methodSpec", "getter", "setter", "singletonMethod"]);

/** The start of a function value: `function`, an arrow with parameters, or `x =>`. */
const FUNCTION_START = String.raw`(?:async\s+)?(?:function\b|\([^)]*\)\s*(?::[^=]*)?=>|[\w$]+\s*=>|<)`;

/** A variable, constant or field holding a function (`const f = () => ...`, `handler = async (x) => ...`). */
const ASSIGNED_FUNCTION = new RegExp(
  String.raw`^\s*(?:export\s+)?(?:(?:public|private|protected|static|readonly|declare)\s+)*(?:const\s+|let\s+|var\s+)?#?[\w$]+\s*(?::[^=]*)?=\s*` +
    FUNCTION_START,
);

/** An object literal property holding a function (`onClick: () => ...`). */
const PROPERTY_FUNCTION = new RegExp(String.raw`^\s*#?[\w$]+\s*:\s*` + FUNCTION_START);

/** True for a definition of something callable, including JavaScript/TypeScript function values. */
export function isCallable(definition: Definition): boolean {
  const kinds = CALLABLE_KINDS[definition.language] ?? DEFAULT_CALLABLE_KINDS;
  if (kinds.includes(definition.kind)) return true;
  if (definition.language !== "JavaScript" && definition.language !== "TypeScript") return false;
  if (!["constant", "variable", "field", "property"].includes(definition.kind)) return false;
  const pattern = definition.pattern;
  return pattern !== undefined && (ASSIGNED_FUNCTION.test(pattern) || PROPERTY_FUNCTION.test(pattern));
}

/** True for a callable that belongs to a class, struct, interface, trait or impl. */
export function isMethod(definition: Definition): boolean {
  if (!isCallable(definition)) return false;
  if (METHOD_KINDS.has(definition.kind) || (definition.language === "Python" && definition.kind === "member"))
    return true;
  return definition.scopeKind !== undefined && TYPE_SCOPE_KINDS.has(definition.scopeKind);
}

/** True for a callable that is not a method: top-level, nested in a function, or in a namespace. */
export function isFunction(definition: Definition): boolean {
  return isCallable(definition) && !isMethod(definition);
}

/** True for a class-like definition; a C/C++ typedef counts when it names a struct, union or class. */
export function isClassLike(definition: Definition): boolean {
  const kinds = CLASS_KINDS[definition.language] ?? DEFAULT_CLASS_KINDS;
  if (kinds.includes(definition.kind)) return !definition.name.startsWith("__anon");
  if (definition.kind === "typedef" && (definition.language === "C" || definition.language === "C++")) {
    return /^(struct|union|class|enum):/.test(definition.typeref ?? "");
  }
  return false;
}
