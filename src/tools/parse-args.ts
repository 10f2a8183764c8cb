import { z } from "zod";
import { InvalidArgumentError } from "../util/errors.js";

const strictObjects = new WeakMap<z.ZodRawShape, z.ZodObject>();

/** The strict object for a tool's input shape (unknown keys refused), built once per shape. */
export function strictInput<Shape extends z.ZodRawShape>(shape: Shape): z.ZodObject<Shape> {
  let object = strictObjects.get(shape);
  if (object === undefined) {
    object = z.object(shape).strict();
    strictObjects.set(shape, object);
  }
  return object as z.ZodObject<Shape>;
}

/**
 * Checks a tool's arguments against its input shape, refusing arguments the shape does not name,
 * so a misspelt option is an error rather than silently ignored. `tool` names the tool in the
 * message. Throws InvalidArgumentError naming the field (or the unknown arguments) and the fix.
 */
export function parseArgs<Shape extends z.ZodRawShape>(
  shape: Shape,
  args: unknown,
  tool = "this tool",
): z.infer<z.ZodObject<Shape>> {
  const result = strictInput(shape).safeParse(args ?? {});
  if (result.success) return result.data as z.infer<z.ZodObject<Shape>>;
  const issues = result.error.issues;
  // Unknown arguments first: a misspelt name usually explains the other problems too. Every other
  // problem is named after it, so one reply shows everything to fix.
  const unknown = issues.find((i) => i.code === "unrecognized_keys");
  const others = issues.filter((i) => i !== (unknown ?? issues[0])).map((i) => describeIssue(i, args));
  const fixes = others.length > 0 ? `; also ${others.map((o) => `${o.field}: ${o.problem}`).join("; ")}` : "";
  if (unknown !== undefined && unknown.code === "unrecognized_keys") {
    throw unknownArguments(unknown.keys, Object.keys(shape), tool, fixes);
  }
  const first = describeIssue(issues[0], args);
  throw new InvalidArgumentError(first.field, `${first.problem}${fixes}`);
}

/** One of zod's issues as the field it concerns and what is wrong with it. */
function describeIssue(
  issue: z.core.$ZodIssue | undefined,
  args: unknown,
): { field: string; problem: string } {
  const field = issue?.path.length ? issue.path.map(String).join(".") : "arguments";
  const message = issue?.message ?? "is invalid";
  const missing = valueAt(args, issue?.path ?? []) === undefined && (issue?.path.length ?? 0) > 0;
  return {
    field,
    problem: missing ? `is required (${message.replace(/^Invalid (input|option): /, "")})` : message,
  };
}

function unknownArguments(
  keys: readonly string[],
  known: readonly string[],
  tool: string,
  fixes: string,
): InvalidArgumentError {
  const guesses = keys
    .map((key) => [key, known.find((name) => loose(name) === loose(key))] as const)
    .filter((pair): pair is readonly [string, string] => pair[1] !== undefined)
    .map(([key, name]) => `${name} for ${key}`);
  const guess = guesses.length > 0 ? ` Did you mean ${guesses.join(", ")}?` : "";
  const takes = known.length > 0 ? `its arguments are ${known.join(", ")}` : "it takes no arguments";
  const what = keys.length === 1 ? "is not an argument" : "are not arguments";
  return new InvalidArgumentError(keys.join(", "), `${what} of ${tool}; ${takes}.${guess}${fixes}`);
}

/** A name with case, `_` and `-` ignored, so replaceBranch meets replace_branch. */
function loose(name: string): string {
  return name.toLowerCase().replace(/[_-]/g, "");
}

function valueAt(value: unknown, path: readonly PropertyKey[]): unknown {
  let at = value;
  for (const key of path) {
    if (at === null || typeof at !== "object") return undefined;
    at = (at as Record<PropertyKey, unknown>)[key];
  }
  return at;
}
