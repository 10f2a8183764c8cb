/**
 * A small evaluator for JSONPath filter and script expressions (`[?(@.price < 10)]`,
 * `[(@.length-1)]`). It reads data and compares it; it cannot call functions, build regular
 * expressions, assign, or reach a prototype, so a path can neither run code nor hang the host.
 */

import { type FilterNode, parseFilter } from "./filter-parser.js";

/** Parses an expression once; `evaluate` runs it against one context. Throws Error on bad input. */
export class FilterExpression {
  private readonly root: FilterNode;

  constructor(readonly source: string) {
    this.root = parseFilter(source);
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

function evaluateNode(node: FilterNode, context: object): unknown {
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

function binary(node: Extract<FilterNode, { type: "binary" }>, context: object): unknown {
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
