import { InvalidArgumentError } from "../../util/errors.js";
import { MAX_JSON_DEPTH } from "./json-document.js";

/** Deepest value an edit may insert, so the edited file stays within the scanner's limit. */
export const MAX_VALUE_DEPTH = MAX_JSON_DEPTH / 2;

/**
 * Checks that `value` is plain JSON data (null, booleans, finite numbers, strings, arrays, plain
 * objects) no deeper than MAX_VALUE_DEPTH, naming `field` when it is not.
 */
export function assertJsonValue(value: unknown, field = "value"): void {
  if (value === undefined)
    throw new InvalidArgumentError(field, "is required for this operation; pass any JSON value");
  const stack: { value: unknown; depth: number }[] = [{ value, depth: 0 }];
  while (stack.length > 0) {
    const { value: v, depth } = stack.pop() as { value: unknown; depth: number };
    if (v === null || typeof v === "string" || typeof v === "boolean") continue;
    if (typeof v === "number") {
      if (!Number.isFinite(v))
        throw new InvalidArgumentError(field, "holds a number JSON cannot represent (NaN or Infinity)");
      continue;
    }
    if (typeof v !== "object")
      throw new InvalidArgumentError(field, `holds a ${typeof v}, which is not JSON`);
    if (depth >= MAX_VALUE_DEPTH)
      throw new InvalidArgumentError(field, `nests deeper than ${MAX_VALUE_DEPTH} levels`);
    const proto = Object.getPrototypeOf(v) as unknown;
    if (!Array.isArray(v) && proto !== Object.prototype && proto !== null) {
      throw new InvalidArgumentError(field, "holds an object that is not plain JSON data");
    }
    for (const child of Object.values(v)) stack.push({ value: child, depth: depth + 1 });
  }
}
