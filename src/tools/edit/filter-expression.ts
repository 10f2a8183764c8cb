/**
 * A small evaluator for JSONPath filter and script expressions (`[?(@.price < 10)]`,
 * `[(@.length-1)]`). It reads data and compares it; it cannot call functions, build regular
 * expressions, assign, or reach a prototype, so a path can neither run code nor hang the host.
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

type Node =
  | { readonly type: "literal"; readonly value: unknown }
  | { readonly type: "name"; readonly name: string }
  | { readonly type: "member"; readonly object: Node; readonly property: Node }
  | { readonly type: "unary"; readonly operator: string; readonly operand: Node }
  | { readonly type: "binary"; readonly operator: string; readonly left: Node; readonly right: Node };

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

/** Parses an expression once; `evaluate` runs it against one context. Throws Error on bad input. */
export class FilterExpression {
  private readonly root: Node;

  constructor(readonly source: string) {
    if (source.length > MAX_EXPRESSION_CHARS) {
      throw new Error(`the expression is longer than ${MAX_EXPRESSION_CHARS} characters`);
    }
    this.root = new Parser(tokenize(source)).parseAll();
  }

  /** Evaluates against `context`, whose own properties are the names the expression may use. */
  evaluate(context: object): unknown {
    return evaluateNode(this.root, context);
  }
}

/**
 * What jsonpath-plus's `eval` option receives: it is constructed with the code and run with
 * `runInNewContext`. The short `toString` keeps jsonpath-plus's cache keys small.
 */
export class SafeFilterScript {
  private readonly expression: FilterExpression;

  constructor(code: string) {
    this.expression = new FilterExpression(code);
  }

  runInNewContext(context: object): unknown {
    return this.expression.evaluate(context);
  }

  static toString(): string {
    return "drydockFilter";
  }
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

  parseAll(): Node {
    if (this.tokens.length === 0) throw new Error("the expression is empty");
    const node = this.parseLevel(0);
    const extra = this.tokens[this.at];
    if (extra !== undefined) throw this.unexpected(extra);
    return node;
  }

  private parseLevel(level: number): Node {
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

  private parseUnary(): Node {
    const token = this.tokens[this.at];
    if (token?.kind === "punct" && (token.text === "!" || token.text === "-" || token.text === "+")) {
      this.at++;
      return this.nested(() => ({ type: "unary", operator: token.text, operand: this.parseUnary() }));
    }
    return this.parsePostfix();
  }

  private parsePostfix(): Node {
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

  private parsePrimary(): Node {
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

function evaluateNode(node: Node, context: object): unknown {
  switch (node.type) {
    case "literal":
      return node.value;
    case "name":
      return Object.hasOwn(context, node.name) ? (context as Record<string, unknown>)[node.name] : undefined;
    case "member":
      return member(evaluateNode(node.object, context), evaluateNode(node.property, context));
    case "unary": {
      const value = evaluateNode(node.operand, context);
      if (node.operator === "!") return !value;
      return node.operator === "-" ? -(value as number) : +(value as number);
    }
    case "binary":
      return binary(node, context);
  }
}

/** Reads an own property only: data has no methods to reach, and prototypes stay out of sight. */
function member(object: unknown, property: unknown): unknown {
  if (object === null || (typeof object !== "object" && typeof object !== "string")) return undefined;
  const key = typeof property === "number" ? String(property) : property;
  if (typeof key !== "string" || !Object.hasOwn(object as object, key)) return undefined;
  const value = (object as Record<string, unknown>)[key];
  return typeof value === "function" ? undefined : value;
}

function binary(node: Extract<Node, { type: "binary" }>, context: object): unknown {
  const left = evaluateNode(node.left, context);
  if (node.operator === "&&") return left && evaluateNode(node.right, context);
  if (node.operator === "||") return left || evaluateNode(node.right, context);
  const right = evaluateNode(node.right, context);
  if (isObject(left) || isObject(right)) {
    // An object from the data may carry a "toString" or "valueOf" key; never let JavaScript
    // convert it. Objects compare by identity and take part in no arithmetic or ordering.
    if (node.operator === "==" || node.operator === "===") return left === right;
    if (node.operator === "!=" || node.operator === "!==") return left !== right;
    return undefined;
  }
  const l = left as number;
  const r = right as number;
  switch (node.operator) {
    case "==":
      return left == right;
    case "!=":
      return left != right;
    case "===":
      return left === right;
    case "!==":
      return left !== right;
    case "<":
      return l < r;
    case "<=":
      return l <= r;
    case ">":
      return l > r;
    case ">=":
      return l >= r;
    case "+":
      return l + r;
    case "-":
      return l - r;
    case "*":
      return l * r;
    case "/":
      return l / r;
    default:
      return l % r;
  }
}

function isObject(value: unknown): value is object {
  return typeof value === "object" && value !== null;
}
