/**
 * The parser behind FilterExpression: tokens, then a precedence-climbing parse into a small
 * tree. It knows only literals, the @-names, member access and operators; anything else is an
 * error that says what is allowed.
 */

/** Longest expression accepted, and deepest nesting of parentheses and operators. */
const MAX_EXPRESSION_CHARS = 2_000;
const MAX_NESTING = 64;

/** The names jsonpath-plus hands an expression, and how a user writes them. */
const NAMES: Readonly<Record<string, string>> = {
  "@": "_$_v",
  "@root": "_$_root",
  "@parent": "_$_parent",
  "@property": "_$_property",
  "@parentProperty": "_$_parentProperty",
  "@path": "_$_path",
  _$_v: "_$_v",
  _$_root: "_$_root",
  _$_parent: "_$_parent",
  _$_property: "_$_property",
  _$_parentProperty: "_$_parentProperty",
  _$_path: "_$_path",
};

const LITERALS: Readonly<Record<string, unknown>> = { true: true, false: false, null: null, undefined };

export type FilterNode =
  | { readonly type: "literal"; readonly value: unknown }
  | { readonly type: "name"; readonly name: string }
  | { readonly type: "member"; readonly object: FilterNode; readonly property: FilterNode }
  | { readonly type: "unary"; readonly operator: string; readonly operand: FilterNode }
  | {
      readonly type: "binary";
      readonly operator: string;
      readonly left: FilterNode;
      readonly right: FilterNode;
    };

type Token = {
  readonly kind: "number" | "string" | "name" | "punct";
  readonly text: string;
  readonly value?: unknown;
};

const PUNCTUATION = [
  "===",
  "!==",
  "==",
  "!=",
  "<=",
  ">=",
  "&&",
  "||",
  "<",
  ">",
  "!",
  "+",
  "-",
  "*",
  "/",
  "%",
  "(",
  ")",
  "[",
  "]",
  ".",
];

/** Binary operators by precedence, loosest first. */
const LEVELS: readonly (readonly string[])[] = [
  ["||"],
  ["&&"],
  ["==", "!=", "===", "!=="],
  ["<", "<=", ">", ">="],
  ["+", "-"],
  ["*", "/", "%"],
];

/** Parses a filter or script expression into a tree; throws Error saying what is wrong. */
export function parseFilter(source: string): FilterNode {
  if (source.length > MAX_EXPRESSION_CHARS) {
    throw new Error(`the expression is longer than ${MAX_EXPRESSION_CHARS} characters`);
  }
  return new Parser(tokenize(source)).parseAll();
}

function tokenize(source: string): Token[] {
  const tokens: Token[] = [];
  let i = 0;
  while (i < source.length) {
    const c = source[i] as string;
    if (/\s/.test(c)) {
      i++;
      continue;
    }
    const number = /^(?:\d+(?:\.\d+)?|\.\d+)(?:[eE][+-]?\d+)?/.exec(source.slice(i, i + 400));
    if (number !== null) {
      tokens.push({ kind: "number", text: number[0], value: Number(number[0]) });
      i += number[0].length;
      continue;
    }
    if (c === "'" || c === '"') {
      const [value, end] = readQuoted(source, i);
      tokens.push({ kind: "string", text: source.slice(i, end), value });
      i = end;
      continue;
    }
    const name = /^@?[A-Za-z_$][\w$]*|^@/.exec(source.slice(i, i + 200));
    if (name !== null) {
      tokens.push({ kind: "name", text: name[0] });
      i += name[0].length;
      continue;
    }
    const punct = PUNCTUATION.find((p) => source.startsWith(p, i));
    if (punct === undefined) throw new Error(`unexpected ${JSON.stringify(c)} in the expression`);
    tokens.push({ kind: "punct", text: punct });
    i += punct.length;
  }
  return tokens;
}

function readQuoted(source: string, start: number): [string, number] {
  const quote = source[start];
  let out = "";
  let i = start + 1;
  while (i < source.length) {
    const c = source[i] as string;
    if (c === quote) return [out, i + 1];
    if (c === "\\") {
      const e = source[i + 1];
      if (e === "u" && /^[0-9a-fA-F]{4}$/.test(source.slice(i + 2, i + 6))) {
        out += String.fromCharCode(Number.parseInt(source.slice(i + 2, i + 6), 16));
        i += 6;
        continue;
      }
      const escapes: Record<string, string> = {
        n: "\n",
        t: "\t",
        r: "\r",
        b: "\b",
        f: "\f",
        "\\": "\\",
        "'": "'",
        '"': '"',
        "/": "/",
      };
      const mapped = e === undefined ? undefined : escapes[e];
      if (mapped === undefined) throw new Error("bad escape in a string in the expression");
      out += mapped;
      i += 2;
      continue;
    }
    out += c;
    i++;
  }
  throw new Error("unterminated string in the expression");
}

class Parser {
  private at = 0;
  private depth = 0;

  constructor(private readonly tokens: Token[]) {}

  parseAll(): FilterNode {
    if (this.tokens.length === 0) throw new Error("the expression is empty");
    const node = this.parseLevel(0);
    const extra = this.tokens[this.at];
    if (extra !== undefined) throw this.unexpected(extra);
    return node;
  }

  private parseLevel(level: number): FilterNode {
    const operators = LEVELS[level];
    if (operators === undefined) return this.parseUnary();
    let left = this.parseLevel(level + 1);
    for (;;) {
      const token = this.tokens[this.at];
      if (token?.kind !== "punct" || !operators.includes(token.text)) return left;
      this.at++;
      left = { type: "binary", operator: token.text, left, right: this.parseLevel(level + 1) };
    }
  }

  private parseUnary(): FilterNode {
    const token = this.tokens[this.at];
    if (token?.kind === "punct" && (token.text === "!" || token.text === "-" || token.text === "+")) {
      this.at++;
      return this.nested(() => ({ type: "unary", operator: token.text, operand: this.parseUnary() }));
    }
    return this.parsePostfix();
  }

  private parsePostfix(): FilterNode {
    let node = this.parsePrimary();
    for (;;) {
      const token = this.tokens[this.at];
      if (token?.kind !== "punct") return node;
      if (token.text === ".") {
        this.at++;
        const name = this.tokens[this.at];
        if (name?.kind !== "name" || name.text.startsWith("@"))
          throw new Error("expected a property name after '.'");
        this.at++;
        node = { type: "member", object: node, property: { type: "literal", value: name.text } };
      } else if (token.text === "[") {
        this.at++;
        const property = this.nested(() => this.parseLevel(0));
        this.expect("]");
        node = { type: "member", object: node, property };
      } else if (token.text === "(") {
        throw new Error(
          "function and method calls are not allowed in filters; compare values with ==, <, &&, ||",
        );
      } else {
        return node;
      }
    }
  }

  private parsePrimary(): FilterNode {
    const token = this.tokens[this.at];
    if (token === undefined) throw new Error("the expression ends where a value should be");
    this.at++;
    if (token.kind === "number" || token.kind === "string") return { type: "literal", value: token.value };
    if (token.kind === "name") {
      if (Object.hasOwn(LITERALS, token.text)) return { type: "literal", value: LITERALS[token.text] };
      const name = NAMES[token.text];
      if (name === undefined) {
        throw new Error(
          `unknown name ${JSON.stringify(token.text)}; filters can use @ (the current value), @root, @parent, @property, @parentProperty and @path`,
        );
      }
      return { type: "name", name };
    }
    if (token.text === "(") {
      const inner = this.nested(() => this.parseLevel(0));
      this.expect(")");
      return inner;
    }
    if (token.text === "/") throw new Error("regular expressions are not allowed in filters");
    throw this.unexpected(token);
  }

  private nested<T>(parse: () => T): T {
    if (++this.depth > MAX_NESTING) throw new Error(`the expression nests deeper than ${MAX_NESTING} levels`);
    try {
      return parse();
    } finally {
      this.depth--;
    }
  }

  private expect(text: string): void {
    const token = this.tokens[this.at];
    if (token?.kind !== "punct" || token.text !== text) {
      throw token === undefined
        ? new Error(`expected '${text}' at the end of the expression`)
        : this.unexpected(token);
    }
    this.at++;
  }

  private unexpected(token: Token): Error {
    return new Error(`unexpected ${JSON.stringify(token.text)} in the expression`);
  }
}
