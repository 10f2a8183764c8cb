import { readFileSync } from "node:fs";
import { z } from "zod";
import { InvalidArgumentError } from "../util/errors.js";

const ruleSchema = z.strictObject({
  name: z.string().optional(),
  match: z.union([
    z.string().min(1),
    z.strictObject({ regex: z.string().min(1), flags: z.string().optional() }),
  ]),
  reply: z.union([z.string(), z.array(z.string())]),
  model: z.string().min(1).optional(),
});

const scriptSchema = z.strictObject({ description: z.string().optional(), rules: z.array(ruleSchema) });

/** One rule of a script, compiled. */
export interface OfflineRule {
  name: string;
  /** How the rule matches, for messages: `"phrase"` or `/regex/flags`. */
  pattern: string;
  /** Only requests for a model whose name contains this (case-insensitive), when set. */
  model?: string;
  reply: string;
  test(text: string): boolean;
}

export interface OfflineScript {
  /** Where the script came from (a file path), named in replies that match no rule. */
  source: string;
  rules: OfflineRule[];
}

/** What the offline model is asked: the request's model and the text of its messages. */
export interface OfflinePrompt {
  model: string;
  lastUserText: string;
  wholeText: string;
}

/**
 * Parses a script: a JSON array of rules, or `{ "description"?, "rules": [...] }`. A rule is
 * `{ "match": "phrase" | { "regex": "...", "flags"?: "i" }, "reply": "text" | ["line", ...],
 * "model"?: "substring", "name"?: "..." }`; a phrase matches case-insensitively.
 */
export function parseOfflineScript(json: string, source: string): OfflineScript {
  let value: unknown;
  try {
    value = JSON.parse(json);
  } catch (error) {
    throw new InvalidArgumentError("script", `${source} is not valid JSON: ${(error as Error).message}`);
  }
  const parsed = scriptSchema.safeParse(Array.isArray(value) ? { rules: value } : value);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const where = issue?.path.length ? ` at ${issue.path.join(".")}` : "";
    throw new InvalidArgumentError(
      "script",
      `${source} is not an offline-model script${where}: ${issue?.message ?? "invalid"}. Expected a list of {"match": "phrase" | {"regex": "..."}, "reply": "..."}`,
    );
  }
  return { source, rules: parsed.data.rules.map((rule, index) => compileRule(rule, index, source)) };
}

export function loadOfflineScript(path: string): OfflineScript {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (error) {
    throw new InvalidArgumentError(
      "script",
      `${path} could not be read (${(error as Error).message}); pass an existing script file`,
    );
  }
  return parseOfflineScript(text, path);
}

function compileRule(rule: z.infer<typeof ruleSchema>, index: number, source: string): OfflineRule {
  const reply = Array.isArray(rule.reply) ? rule.reply.join("\n") : rule.reply;
  const name = rule.name ?? `rule ${index + 1}`;
  const base = { name, reply, ...(rule.model !== undefined ? { model: rule.model } : {}) };
  if (typeof rule.match === "string") {
    const phrase = rule.match.toLowerCase();
    return {
      ...base,
      pattern: JSON.stringify(rule.match),
      test: (text) => text.toLowerCase().includes(phrase),
    };
  }
  let regex: RegExp;
  try {
    regex = new RegExp(rule.match.regex, (rule.match.flags ?? "").replace(/[gy]/g, ""));
  } catch (error) {
    throw new InvalidArgumentError(
      "script",
      `${source}: ${name} has a bad regex: ${(error as Error).message}`,
    );
  }
  return { ...base, pattern: String(regex), test: (text) => regex.test(text) };
}

/**
 * The rule that answers a prompt: rules are tried in order against the last user message, then in
 * order against the text of the whole request; the first that matches wins.
 */
export function chooseRule(script: OfflineScript, prompt: OfflinePrompt): OfflineRule | undefined {
  const model = prompt.model.toLowerCase();
  const eligible = script.rules.filter((rule) => !rule.model || model.includes(rule.model.toLowerCase()));
  return (
    eligible.find((rule) => rule.test(prompt.lastUserText)) ??
    eligible.find((rule) => rule.test(prompt.wholeText))
  );
}

/** The assistant message sent when no rule matches: it says which script and what its rules match on. */
export function noRuleReply(script: OfflineScript): string {
  const patterns = script.rules.map((rule) => rule.pattern);
  return [
    `drydock offline model: no rule in the script ${script.source} matches this request, so it proposes no edit.`,
    patterns.length > 0
      ? `Its rules match on: ${patterns.join(", ")}. Put one of these in the prompt, or add a rule to the script (see docs/aider.md, The offline model).`
      : "The script has no rules; add some (see docs/aider.md, The offline model).",
  ].join("\n");
}
