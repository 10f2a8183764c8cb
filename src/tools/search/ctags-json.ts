/** One definition ctags found. Lines are 1-based; `end` is the last line when ctags knows it. */
export interface Definition {
  readonly name: string;
  readonly kind: string;
  readonly path: string;
  readonly line: number;
  readonly end?: number;
  /** The enclosing scope as ctags names it (`Greeter`, `geo::Circle`, `main.Server`). */
  readonly scope?: string;
  readonly scopeKind?: string;
  readonly language: string;
  readonly signature?: string;
  /** Type information, e.g. `struct:point` for a C typedef of a struct. */
  readonly typeref?: string;
  /** The start of the defining line, as ctags saw it (cut at 96 characters). */
  readonly pattern?: string;
}

/** Parses ctags `--output-format=json` output; lines that are not tags (or not JSON) are skipped. */
export function parseCtagsJson(output: string): Definition[] {
  const definitions: Definition[] = [];
  for (const line of output.split("\n")) {
    if (!line.startsWith("{")) continue;
    let raw: unknown;
    try {
      raw = JSON.parse(line);
    } catch {
      continue;
    }
    const definition = toDefinition(raw);
    if (definition !== undefined) definitions.push(definition);
  }
  return definitions;
}

function toDefinition(raw: unknown): Definition | undefined {
  if (raw === null || typeof raw !== "object") return undefined;
  const tag = raw as Record<string, unknown>;
  const { name, kind, path, line } = tag;
  if (
    tag["_type"] !== "tag" ||
    typeof name !== "string" ||
    typeof kind !== "string" ||
    typeof path !== "string"
  ) {
    return undefined;
  }
  if (typeof line !== "number" || !Number.isInteger(line) || line < 1) return undefined;
  const text = (key: string): string | undefined =>
    typeof tag[key] === "string" ? (tag[key] as string) : undefined;
  const end = typeof tag["end"] === "number" && tag["end"] >= line ? tag["end"] : undefined;
  const pattern = text("pattern");
  return dropUndefined({
    name,
    kind,
    path: path.startsWith("./") ? path.slice(2) : path,
    line,
    end,
    scope: text("scope"),
    scopeKind: text("scopeKind"),
    language: text("language") ?? "unknown",
    signature: text("signature"),
    typeref: text("typeref"),
    pattern: pattern === undefined ? undefined : unescapePattern(pattern),
  });
}

/** `/^  greet(x) {$/` → `  greet(x) {`, undoing ctags' escapes of `/` and `\`. */
function unescapePattern(pattern: string): string {
  let body = pattern;
  if (body.startsWith("/^")) body = body.slice(2);
  else if (body.startsWith("/")) body = body.slice(1);
  if (body.endsWith("$/")) body = body.slice(0, -2);
  else if (body.endsWith("/")) body = body.slice(0, -1);
  return body.replace(/\\([\\/])/g, "$1");
}

function dropUndefined<T extends object>(value: T): T {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as T;
}
