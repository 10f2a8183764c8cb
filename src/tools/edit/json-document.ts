/**
 * A JSON (or JSONC: comments and trailing commas) file parsed for editing in place: the syntax
 * tree of jsonc-parser with each node's offset, the value it holds, and its layout.
 */
import {
  createScanner,
  type Node,
  type ParseError,
  type ParseErrorCode,
  parseTree,
  printParseErrorCode,
  SyntaxKind,
} from "jsonc-parser";
import { InvalidArgumentError, InvalidJsonError } from "../../util/errors.js";

/** Deepest nesting accepted; deeper documents are refused before anything recurses over them. */
export const MAX_JSON_DEPTH = 512;

/** How the file is written, so inserted values look like their neighbours. */
export interface JsonStyle {
  /** One level of indentation: a tab or some spaces. */
  readonly unit: string;
  readonly eol: "\n" | "\r\n";
  /** Whether `:` and `,` are followed by a space on one line (`{"a": 1, "b": 2}`). */
  readonly spaced: boolean;
}

/** A key that appears twice in one object: the value keeps only the last. */
export interface DuplicateKey {
  readonly key: string;
  readonly first: { line: number; column: number };
  readonly again: { line: number; column: number };
}

export interface JsonDocument {
  /** The text without a leading BOM; node offsets count in it. */
  readonly body: string;
  readonly bom: boolean;
  readonly root: Node;
  readonly value: unknown;
  readonly style: JsonStyle;
  readonly duplicates: DuplicateKey[];
}

/** Parses a JSON or JSONC text; invalid text throws InvalidJsonError with line and column. */
export function parseJsonDocument(text: string): JsonDocument {
  const bom = text.charCodeAt(0) === 0xfeff;
  const body = bom ? text.slice(1) : text;
  assertDepth(body);
  const errors: ParseError[] = [];
  const root = parseTree(body, errors, { allowTrailingComma: true, disallowComments: false });
  const first = errors[0];
  if (first !== undefined || root === undefined) {
    const offset = first?.offset ?? 0;
    const { line, column } = positionAt(body, offset);
    throw new InvalidJsonError(line, column, describeParseError(first?.error, body, offset));
  }
  return {
    body,
    bom,
    root,
    value: valueOf(root),
    style: styleOf(body),
    duplicates: duplicatesIn(body, root),
  };
}

/** Refuses to edit a document with duplicate keys: which of the two an edit meant is unknowable. */
export function assertNoDuplicates(document: JsonDocument): void {
  const duplicate = document.duplicates[0];
  if (duplicate === undefined) return;
  throw new InvalidArgumentError(
    "file_path",
    `the file has the key ${JSON.stringify(duplicate.key)} twice in one object (line ${duplicate.first.line} column ${duplicate.first.column} and line ${duplicate.again.line} column ${duplicate.again.column}); a reader keeps only the last, so an edit could change the wrong one. Remove one with file_editor, then retry. Nothing was changed`,
  );
}

/** Line and column (1-based, columns in UTF-16 units) of an offset. */
export function positionAt(text: string, offset: number): { line: number; column: number } {
  let line = 1;
  let lineStart = 0;
  for (let i = text.indexOf("\n"); i !== -1 && i < offset; i = text.indexOf("\n", i + 1)) {
    line++;
    lineStart = i + 1;
  }
  return { line, column: offset - lineStart + 1 };
}

function assertDepth(body: string): void {
  const scanner = createScanner(body, true);
  let depth = 0;
  for (let kind = scanner.scan(); kind !== SyntaxKind.EOF; kind = scanner.scan()) {
    if (kind === SyntaxKind.OpenBraceToken || kind === SyntaxKind.OpenBracketToken) {
      if (++depth > MAX_JSON_DEPTH) {
        const { line, column } = positionAt(body, scanner.getTokenOffset());
        throw new InvalidJsonError(line, column, `it nests deeper than ${MAX_JSON_DEPTH} levels`);
      }
    } else if (kind === SyntaxKind.CloseBraceToken || kind === SyntaxKind.CloseBracketToken) {
      depth--;
    }
  }
}

const readable: Partial<Record<string, string>> = {
  InvalidSymbol: "unexpected character (strings and keys take double quotes)",
  InvalidNumberFormat: "malformed number",
  PropertyNameExpected: "expected a key in double quotes",
  ValueExpected: "expected a value",
  ColonExpected: "expected ':'",
  CommaExpected: "expected ','",
  CloseBraceExpected: "expected '}'",
  CloseBracketExpected: "expected ']'",
  EndOfFileExpected: "unexpected text after the end of the JSON value",
  InvalidCommentToken: "malformed comment",
  UnexpectedEndOfComment: "unterminated comment",
  UnexpectedEndOfString: "unterminated string",
  UnexpectedEndOfNumber: "unterminated number",
  InvalidUnicode: "bad \\u escape",
  InvalidEscapeCharacter: "bad escape",
  InvalidCharacter: "control character in a string (write it escaped, e.g. \\t)",
};

function describeParseError(code: ParseErrorCode | undefined, body: string, offset: number): string {
  if (code === undefined || body.trim() === "") return "there is no JSON value";
  const name = printParseErrorCode(code);
  return `${readable[name] ?? name} near ${JSON.stringify(body.slice(offset, offset + 12))}`;
}

/** The node's value; keys become own data properties, so "__proto__" stays a key. */
function valueOf(node: Node): unknown {
  switch (node.type) {
    case "object": {
      const object: Record<string, unknown> = {};
      for (const property of node.children ?? []) {
        const [key, value] = property.children ?? [];
        if (key === undefined || value === undefined) continue;
        Object.defineProperty(object, key.value as string, {
          value: valueOf(value),
          writable: true,
          enumerable: true,
          configurable: true,
        });
      }
      return object;
    }
    case "array":
      return (node.children ?? []).map(valueOf);
    default:
      return node.value as unknown;
  }
}

function duplicatesIn(body: string, root: Node): DuplicateKey[] {
  const found: DuplicateKey[] = [];
  const stack = [root];
  while (stack.length > 0 && found.length < 20) {
    const node = stack.pop() as Node;
    if (node.type === "object") {
      const seen = new Map<string, number>();
      for (const property of node.children ?? []) {
        const key = property.children?.[0];
        if (key === undefined) continue;
        const name = key.value as string;
        const before = seen.get(name);
        if (before !== undefined) {
          found.push({ key: name, first: positionAt(body, before), again: positionAt(body, key.offset) });
        } else seen.set(name, key.offset);
      }
    }
    for (const child of node.children ?? []) stack.push(child);
  }
  return found;
}

function styleOf(body: string): JsonStyle {
  const indented = /\n([ \t]+)\S/.exec(body);
  const lead = indented?.[1] ?? "  ";
  const unit = lead.startsWith("\t") ? "\t" : " ".repeat(Math.min(lead.length, 10));
  const eol = /\r\n/.test(body) && !/(?<!\r)\n/.test(body) ? "\r\n" : "\n";
  const spaced = body.trim().includes("\n") || /[:,] /.test(body);
  return { unit, eol, spaced };
}
