import { InvalidJsonError } from "../../util/errors.js";

/** Deepest nesting accepted; deeper documents are refused before anything recurses over them. */
export const MAX_JSON_DEPTH = 512;

/** Where something sits in the text, 1-based, columns in UTF-16 units. */
export interface TextPosition {
  readonly line: number;
  readonly column: number;
}

/** A key that appears twice in one object (JSON.parse keeps only the last). */
export interface DuplicateKey {
  readonly key: string;
  readonly first: TextPosition;
  readonly again: TextPosition;
}

/** A number literal a JavaScript number cannot hold exactly (rewriting would change it). */
export interface InexactNumber {
  readonly literal: string;
  readonly at: TextPosition;
}

/** What a strict scan of a JSON text found besides its syntax being valid. */
export interface JsonScan {
  readonly duplicates: DuplicateKey[];
  readonly inexactNumbers: InexactNumber[];
}

interface Frame {
  readonly kind: "object" | "array";
  readonly keys?: Map<string, number>;
}

/** Findings of each sort past this many are not listed (each costs a position lookup). */
const MAX_REPORTED = 20;

const NUMBER = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/y;
const WHITESPACE = /[ \t\n\r]*/y;

/**
 * Checks `text` is strict JSON (RFC 8259; a leading BOM is allowed) without recursion, throwing
 * InvalidJsonError with the line and column of the first problem. Reports duplicate keys and
 * numbers that would not survive a rewrite.
 */
export function scanJson(text: string): JsonScan {
  const duplicates: DuplicateKey[] = [];
  const inexactNumbers: InexactNumber[] = [];
  const stack: Frame[] = [];
  let i = text.charCodeAt(0) === 0xfeff ? 1 : 0;
  const fail = (detail: string, at = i): never => {
    const pos = positionAt(text, at);
    throw new InvalidJsonError(pos.line, pos.column, detail);
  };
  const skipWhitespace = (): void => {
    WHITESPACE.lastIndex = i;
    WHITESPACE.test(text);
    i = WHITESPACE.lastIndex;
  };

  skipWhitespace();
  if (i >= text.length) fail("the file holds no JSON value");
  for (;;) {
    // Expecting a value.
    skipWhitespace();
    const c = text[i];
    if (c === "{" || c === "[") {
      if (stack.length >= MAX_JSON_DEPTH) fail(`nesting is deeper than ${MAX_JSON_DEPTH} levels`);
      i++;
      skipWhitespace();
      if (c === "{") {
        stack.push({ kind: "object", keys: new Map() });
        if (text[i] === "}") {
          stack.pop();
          i++;
        } else {
          readKey(stack[stack.length - 1] as Frame);
          continue;
        }
      } else {
        stack.push({ kind: "array" });
        if (text[i] === "]") {
          stack.pop();
          i++;
        } else {
          continue;
        }
      }
    } else if (c === '"') {
      readString();
    } else if (c === "-" || (c !== undefined && c >= "0" && c <= "9")) {
      NUMBER.lastIndex = i;
      const match = NUMBER.exec(text);
      if (match === null) fail("malformed number");
      const literal = (match as RegExpExecArray)[0];
      if (inexactNumbers.length < MAX_REPORTED && !isExact(literal))
        inexactNumbers.push({ literal, at: positionAt(text, i) });
      i += literal.length;
    } else if (text.startsWith("true", i)) {
      i += 4;
    } else if (text.startsWith("false", i)) {
      i += 5;
    } else if (text.startsWith("null", i)) {
      i += 4;
    } else {
      fail(
        c === undefined
          ? "the text ends where a value should be"
          : `expected a value but found ${describe(c)}`,
      );
    }

    // After a value: close containers, or a comma for the next value.
    for (;;) {
      skipWhitespace();
      const frame = stack[stack.length - 1];
      if (frame === undefined) {
        if (i < text.length)
          fail(`unexpected ${describe(text[i] as string)} after the end of the JSON value`);
        return { duplicates, inexactNumbers };
      }
      const close = frame.kind === "object" ? "}" : "]";
      const d = text[i];
      if (d === close) {
        stack.pop();
        i++;
        continue;
      }
      if (d === ",") {
        i++;
        skipWhitespace();
        if (text[i] === "}" || text[i] === "]") fail(`trailing comma before ${describe(text[i] as string)}`);
        if (frame.kind === "object") readKey(frame);
        break;
      }
      fail(
        d === undefined
          ? `the text ends inside an ${frame.kind}`
          : `expected ',' or '${close}' but found ${describe(d)}`,
      );
    }
  }

  function readKey(frame: Frame): void {
    skipWhitespace();
    if (text[i] !== '"') {
      fail(
        text[i] === undefined
          ? "the text ends where a key should be"
          : `expected a key in double quotes but found ${describe(text[i] as string)}`,
      );
    }
    const start = i;
    const key = readString();
    const seen = frame.keys?.get(key);
    if (seen !== undefined && duplicates.length < MAX_REPORTED)
      duplicates.push({ key, first: positionAt(text, seen), again: positionAt(text, start) });
    else frame.keys?.set(key, start);
    skipWhitespace();
    if (text[i] !== ":") fail(`expected ':' after key ${JSON.stringify(key)}`);
    i++;
  }

  function readString(): string {
    const start = i;
    i++;
    for (;;) {
      const code = text.charCodeAt(i);
      if (Number.isNaN(code)) fail("unterminated string", start);
      if (code === 0x22) break;
      if (code < 0x20) fail("a control character (such as a raw newline or tab) inside a string; escape it");
      if (code === 0x5c) {
        const e = text[i + 1];
        if (e === "u") {
          if (!/^[0-9a-fA-F]{4}$/.test(text.slice(i + 2, i + 6))) fail("bad \\u escape in a string");
          i += 6;
          continue;
        }
        if (e === undefined || !'"\\/bfnrt'.includes(e)) fail("bad escape in a string");
        i += 2;
        continue;
      }
      i++;
    }
    i++;
    return JSON.parse(text.slice(start, i)) as string;
  }
}

/** The 1-based line and column of `offset`. */
export function positionAt(text: string, offset: number): TextPosition {
  let line = 1;
  let lineStart = 0;
  let at = text.indexOf("\n");
  while (at !== -1 && at < offset) {
    line++;
    lineStart = at + 1;
    at = text.indexOf("\n", at + 1);
  }
  return { line, column: offset - lineStart + 1 };
}

function describe(c: string): string {
  if (c === "/") return "'/' (comments are not allowed in JSON)";
  if (c === "'") return "a single quote (JSON strings use double quotes)";
  return JSON.stringify(c);
}

/** True when the literal means exactly the number JavaScript reads from it. */
function isExact(literal: string): boolean {
  const parsed = Number(literal);
  if (!Number.isFinite(parsed)) return false;
  return sameDecimal(canonical(literal), canonical(String(parsed)));
}

interface Decimal {
  readonly negative: boolean;
  readonly digits: string;
  readonly exponent: number;
}

/** A decimal literal as sign, significant digits, and the power of ten of the first digit. */
function canonical(literal: string): Decimal {
  const match = /^(-?)(\d+)(?:\.(\d+))?(?:[eE]([+-]?\d+))?$/.exec(literal);
  if (match === null) return { negative: false, digits: "NaN", exponent: 0 };
  const [, sign = "", whole = "", fraction = "", exp = "0"] = match;
  const all = whole + fraction;
  const lead = all.search(/[1-9]/);
  if (lead === -1) return { negative: false, digits: "", exponent: 0 };
  const digits = all.slice(lead).replace(/0+$/, "");
  return { negative: sign === "-", digits, exponent: Number(exp) + whole.length - 1 - lead };
}

function sameDecimal(a: Decimal, b: Decimal): boolean {
  return a.negative === b.negative && a.digits === b.digits && (a.digits === "" || a.exponent === b.exponent);
}
