/**
 * The text of a tool's reply, written for the model that reads it. Many clients put a result's
 * `content` text into the model's context and never show it `structuredContent`; a JSON object
 * there reaches the model as one line of `\n` escapes. So `content` holds readable text: a tool's
 * main text as it is, then its facts as short `key: value` lines. Programs read
 * `structuredContent`, the object without the fields only the text shows (the bash tool's merged
 * output: the object has the streams apart). Tools whose seed fixes a JSON reply (aider's) keep
 * JSON text. Pure.
 */

/** How a tool turns its result into the reply's text. */
export type ReplyText = (result: Record<string, unknown>) => string;

/** The result as compact JSON: for replies whose text a contract fixes as JSON. */
export const jsonReply: ReplyText = (result) => JSON.stringify(result);

function fact(key: string, value: unknown): string {
  if (typeof value === "string") {
    return value.includes("\n") ? `${key}:\n${value.replace(/\n$/, "")}` : `${key}: ${value}`;
  }
  if (value === null || typeof value !== "object") return `${key}: ${String(value)}`;
  return `${key}: ${JSON.stringify(value)}`;
}

/**
 * Every field in order as `key: value`; a string of several lines as a block under its key; a
 * list or object as JSON on its line. `skip` names fields to leave out (a tool's main text, shown
 * before). Undefined fields and false flags are left out: they say nothing the model needs.
 */
export function factLines(result: Record<string, unknown>, skip: readonly string[] = []): string[] {
  const lines: string[] = [];
  for (const [key, value] of Object.entries(result)) {
    if (skip.includes(key) || value === undefined || value === false) continue;
    lines.push(fact(key, value));
  }
  return lines;
}

/** The default reply text: the result's facts, one a line (see factLines). */
export const readableReply: ReplyText = (result) => factLines(result).join("\n");

/**
 * A reply led by its main text (`field`, shown as it is), then the other facts in brackets, e.g.
 * a file view followed by `[path: /workspace/a.py, total_lines: 40]`.
 */
export function textFirst(field: string, skip: readonly string[] = []): ReplyText {
  return (result) => {
    const main = typeof result[field] === "string" ? (result[field] as string).replace(/\n$/, "") : "";
    const rest = factLines(result, [field, ...skip]).filter((l) => !l.includes("\n"));
    const trailer = rest.length > 0 ? `[${rest.join(", ")}]` : "";
    return [main, trailer].filter((part) => part !== "").join("\n");
  };
}
