/**
 * The aider settings a user may choose, per server (DRYDOCK_AIDER_OPTIONS) and per call
 * (`aider_options`). Only settings that keep aider non-interactive and inside the rules are offered;
 * there is no way to pass raw flags.
 */
import { z } from "zod";
import { InvalidArgumentError } from "../../util/errors.js";

/** aider 0.86.2's edit formats that edit files (ask, context and help do not). */
export const EDIT_FORMATS = [
  "diff",
  "diff-fenced",
  "udiff",
  "udiff-simple",
  "whole",
  "patch",
  "architect",
  "editor-diff",
  "editor-diff-fenced",
  "editor-whole",
] as const;

/** Default time limit of one aider run; a real model on a large change can take many minutes. */
export const DEFAULT_AIDER_TIMEOUT_S = 1200;

/** A shell command aider runs in the box (lint or test); one line, so it stays one argument. */
const command = z
  .string()
  .min(1)
  .max(2000)
  .refine((text) => !/[\0\n\r]/.test(text), "must be one line");

export const aiderOptionsSchema = z.strictObject({
  edit_format: z
    .enum(EDIT_FORMATS)
    .optional()
    .describe("How the model writes edits (default: the model's own, diff for the offline model)."),
  map_tokens: z
    .number()
    .int()
    .min(0)
    .max(65_536)
    .optional()
    .describe("Tokens of repository map sent with the prompt; 0 turns the map off (aider's default 1024)."),
  lint_cmd: command.optional().describe('Lint command aider runs after editing, e.g. "ruff check".'),
  auto_lint: z
    .boolean()
    .optional()
    .describe("Lint after every edit (aider's default: true when lint_cmd is set)."),
  test_cmd: command.optional().describe('Test command, e.g. "python3 -m pytest -q".'),
  auto_test: z
    .boolean()
    .optional()
    .describe("Run test_cmd after every edit and let aider fix failures (default false)."),
  timeout_s: z
    .number()
    .int()
    .min(10)
    .max(7200)
    .optional()
    .describe(`Time limit of the aider run in seconds (default ${DEFAULT_AIDER_TIMEOUT_S}).`),
});

export type AiderOptions = z.infer<typeof aiderOptionsSchema>;

/** Per-call options over the server's; a field the call leaves out keeps the server's value. */
export function mergeAiderOptions(server: AiderOptions, call: AiderOptions | undefined): AiderOptions {
  const merged: AiderOptions = { ...server };
  for (const [key, value] of Object.entries(call ?? {})) {
    if (value !== undefined) (merged as Record<string, unknown>)[key] = value;
  }
  return merged;
}

/** Parses the server's options from JSON text (`DRYDOCK_AIDER_OPTIONS`); `source` names it in errors. */
export function parseAiderOptions(text: string | undefined, source: string): AiderOptions {
  if (text === undefined || text.trim() === "") return {};
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new InvalidArgumentError(
      source,
      `is not JSON (${(error as Error).message}); write e.g. {"edit_format":"whole","map_tokens":0}`,
    );
  }
  const parsed = aiderOptionsSchema.safeParse(value);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const where = issue?.path.length ? `.${issue.path.join(".")}` : "";
    throw new InvalidArgumentError(
      `${source}${where}`,
      `${issue?.message ?? "invalid"}; allowed keys: ${Object.keys(aiderOptionsSchema.shape).join(", ")}`,
    );
  }
  return parsed.data;
}
