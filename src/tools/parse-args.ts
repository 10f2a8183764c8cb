import { z } from "zod";
import { InvalidArgumentError } from "../util/errors.js";

/**
 * Checks a tool's arguments against its input shape, so a tool called without the server's own
 * validation still refuses bad input by naming the field. Throws InvalidArgumentError.
 */
export function parseArgs<Shape extends z.ZodRawShape>(
  shape: Shape,
  args: unknown,
): z.infer<z.ZodObject<Shape>> {
  const result = z.object(shape).safeParse(args ?? {});
  if (result.success) return result.data;
  const issue = result.error.issues[0];
  const field = issue?.path.length ? issue.path.map(String).join(".") : "arguments";
  const fixes =
    result.error.issues.length > 1 ? ` (and ${result.error.issues.length - 1} more problem(s))` : "";
  const message = issue?.message ?? "is invalid";
  const missing = valueAt(args, issue?.path ?? []) === undefined && (issue?.path.length ?? 0) > 0;
  const problem = missing ? `is required (${message.replace(/^Invalid (input|option): /, "")})` : message;
  throw new InvalidArgumentError(field, `${problem}${fixes}`);
}

function valueAt(value: unknown, path: readonly PropertyKey[]): unknown {
  let at = value;
  for (const key of path) {
    if (at === null || typeof at !== "object") return undefined;
    at = (at as Record<PropertyKey, unknown>)[key];
  }
  return at;
}
