/**
 * What an aider run amounted to, in the seed's terms: `success` is true when the run finished
 * cleanly and changed the editable files; otherwise `diff` carries the reason (aider's own message
 * where it gave one) followed by any partial diff. Pure, so every rule is tested without Docker.
 */

export interface AiderRunFacts {
  /** aider's exit code; undefined when it was stopped. */
  exitCode: number | undefined;
  /** aider's output (stdout and stderr interleaved), ANSI codes removed. */
  output: string;
  /** What this call changed in the editable files. */
  diff: string;
  /** Files aider changed although they were not editable; those changes were undone. */
  reverted: readonly string[];
  /** Messages of model calls the LLM gateway refused during the run (limits, keys, replay misses). */
  refusals: readonly string[];
  stopped?: { reason: "cancelled" } | { reason: "timeout"; timeoutS: number };
}

export interface AiderOutcome {
  success: boolean;
  /** The diff on success; otherwise the reason, then the partial diff if there is one. */
  diff: string;
  /** One paragraph for the caller: what happened and, on failure, what to do next. */
  message: string;
}

const APPLIED = /^Applied edit to /;
/** Lines aider prints when a reply's edits could not be applied (every edit format). */
const EDIT_FAILED = [
  /^The LLM did not conform to the edit format\./,
  /^# \d+ SEARCH\/REPLACE blocks? failed to match!/,
  /^Only \d+ reflections allowed, stopping\./,
];
/** Start-up banner and accounting lines, left out of summaries. */
const NOISE = [
  /^Aider v\d/,
  /^(Main |Weak |Editor )?[Mm]odel: /,
  /^Git repo: /,
  /^Repo-map: /,
  /^Added .* to the chat/,
  /^Tokens: /,
  /^Cost: /,
  /^Warning: Input is not a terminal/,
  /^Analytics have been permanently disabled/,
  /^[─-]{10,}$/,
];
const MAX_MESSAGE_CHARS = 4000;

export function aiderOutcome(facts: AiderRunFacts): AiderOutcome {
  const lines = facts.output.split("\n");
  const undone =
    facts.reverted.length > 0
      ? ` aider also changed ${facts.reverted.join(", ")}, which ${facts.reverted.length === 1 ? "is" : "are"} not in relative_editable_files; ${facts.reverted.length === 1 ? "that change was" : "those changes were"} undone (pass ${facts.reverted.length === 1 ? "it" : "them"} as editable to allow it).`
      : "";
  const fail = (reason: string): AiderOutcome => {
    const message = (reason + undone).trim();
    const diff = facts.diff
      ? `${message}\n\nPartial diff (these changes stay in the box):\n${facts.diff}`
      : message;
    return { success: false, diff, message };
  };

  if (facts.stopped?.reason === "cancelled") return fail("aider was cancelled and stopped.");
  if (facts.stopped?.reason === "timeout") {
    return fail(
      `aider did not finish within ${facts.stopped.timeoutS} s and was stopped; raise aider_options.timeout_s or split the task.`,
    );
  }
  if (facts.refusals.length > 0) {
    return fail(`the LLM gateway refused a model call: ${[...new Set(facts.refusals)].join("; ")}`);
  }
  if (facts.exitCode !== undefined && facts.exitCode !== 0) {
    return fail(`aider exited with code ${facts.exitCode}: ${summary(lines)}`);
  }
  const failure = lastEditFailure(lines);
  if (failure !== undefined) return fail(`aider could not apply the model's edits:\n${failure}`);
  if (facts.diff.trim() === "") {
    return fail(`aider made no changes to the editable files. aider said:\n${summary(lines)}`);
  }
  const files = (facts.diff.match(/^diff --git /gm) ?? []).length;
  return {
    success: true,
    diff: facts.diff,
    message: `aider changed ${files} file${files === 1 ? "" : "s"}.${undone}`,
  };
}

/** aider's message when applying edits failed after the last edit it applied; undefined otherwise. */
export function lastEditFailure(lines: readonly string[]): string | undefined {
  const lastApplied = findLastIndex(lines, (line) => APPLIED.test(line));
  const from = lines.findIndex(
    (line, i) => i > lastApplied && EDIT_FAILED.some((pattern) => pattern.test(line)),
  );
  if (from < 0) return undefined;
  const text = lines
    .slice(from)
    .filter((line) => !/^Tokens: |^Cost: /.test(line))
    .join("\n")
    .trim();
  return text.length > MAX_MESSAGE_CHARS ? `${text.slice(0, MAX_MESSAGE_CHARS)}…` : text;
}

/** The last meaningful lines of aider's output, for messages. */
export function summary(lines: readonly string[], count = 20): string {
  const kept = lines
    .map((line) => line.trimEnd())
    .filter((line) => line !== "" && !NOISE.some((p) => p.test(line)));
  const text = kept.slice(-count).join("\n");
  if (text === "") return "(no output)";
  return text.length > MAX_MESSAGE_CHARS ? `…${text.slice(-MAX_MESSAGE_CHARS)}` : text;
}

function findLastIndex<T>(items: readonly T[], test: (item: T) => boolean): number {
  for (let i = items.length - 1; i >= 0; i--) if (test(items[i] as T)) return i;
  return -1;
}
