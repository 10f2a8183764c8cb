import { describe, expect, it } from "vitest";
import {
  aiderOutcome,
  lastEditFailure,
  summary,
  type AiderRunFacts,
} from "../../../src/tools/aider/aider-outcome.js";

const BANNER = [
  "Aider v0.86.2",
  "Model: openai/drydock-offline with diff edit format",
  "Git repo: .git with 3 files",
  "Repo-map: using 1024 tokens, auto refresh",
  "Added greet.py to the chat.",
  "Added test_greet.py to the chat (read-only).",
  "",
];
const EDIT = [
  "greet.py",
  "```python",
  "<<<<<<< SEARCH",
  '    return "Hello " + name',
  "=======",
  '    return f"Hello, {name}!"',
  ">>>>>>> REPLACE",
  "```",
  "",
];
const APPLIED = [
  ...BANNER,
  "I'll fix greet.",
  "",
  ...EDIT,
  "Tokens: 2.1k sent, 56 received.",
  "Applied edit to greet.py",
];
const NO_MATCH = [
  "The LLM did not conform to the edit format.",
  "https://aider.chat/docs/troubleshooting/edit-errors.html",
  "",
  "# 1 SEARCH/REPLACE block failed to match!",
  "",
  "## SearchReplaceNoExactMatch: This SEARCH block failed to exactly match lines in greet.py",
  "<<<<<<< SEARCH",
  '    return "Goodbye " + name',
  "=======",
  '    return f"Goodbye, {name}!"',
  ">>>>>>> REPLACE",
  "",
  "The SEARCH section must exactly match an existing block of lines including all white space, comments, indentation, docstrings, etc",
  "",
];
const FAILED = [
  ...BANNER,
  "I'll change the farewell.",
  ...EDIT,
  "Tokens: 2.2k sent, 40 received.",
  ...NO_MATCH,
  "drydock offline model: I am stopping here.",
  "",
  "Tokens: 2.4k sent, 27 received.",
];
const DIFF = "diff --git a/greet.py b/greet.py\n--- a/greet.py\n+++ b/greet.py\n@@ -1 +1 @@\n-a\n+b\n";

const facts = (over: Partial<AiderRunFacts>): AiderRunFacts => ({
  exitCode: 0,
  output: APPLIED.join("\n"),
  diff: DIFF,
  reverted: [],
  refusals: [],
  ...over,
});

describe("aiderOutcome", () => {
  it("is a success with the diff when aider applied edits and the files changed", () => {
    const outcome = aiderOutcome(facts({}));
    expect(outcome).toEqual({ success: true, diff: DIFF, message: "aider changed 1 file." });
  });

  it("fails with aider's own message when the SEARCH text did not match", () => {
    const outcome = aiderOutcome(facts({ output: FAILED.join("\n"), diff: "" }));
    expect(outcome.success).toBe(false);
    expect(outcome.diff).toMatch(/^aider could not apply the model's edits:\nThe LLM did not conform/);
    expect(outcome.diff).toContain(
      "SearchReplaceNoExactMatch: This SEARCH block failed to exactly match lines in greet.py",
    );
    expect(outcome.diff).not.toContain("Tokens:");
    expect(outcome.diff).not.toContain("Partial diff");
  });

  it("reports a failure after some edits applied with the partial diff after the reason", () => {
    const output = [
      ...BANNER,
      ...EDIT,
      ...NO_MATCH,
      "The other 1 SEARCH/REPLACE block were applied successfully.",
    ].join("\n");
    const outcome = aiderOutcome(facts({ output }));
    expect(outcome.success).toBe(false);
    expect(outcome.diff).toMatch(
      /failed to match![\s\S]*\n\nPartial diff \(these changes stay in the box\):\ndiff --git a\/greet.py/,
    );
    expect(outcome.diff.endsWith(DIFF)).toBe(true);
  });

  it("counts a failed attempt that a later attempt fixed as a success", () => {
    const output = [...BANNER, ...EDIT, ...NO_MATCH, ...EDIT, "Applied edit to greet.py"].join("\n");
    expect(aiderOutcome(facts({ output })).success).toBe(true);
  });

  it("puts the gateway's refusal first: a budget limit stops the run with its message", () => {
    const limit =
      "LLM request limit reached: this session has made 1 of the 1 model calls allowed by --max-llm-requests.";
    const outcome = aiderOutcome(facts({ output: FAILED.join("\n"), diff: "", refusals: [limit, limit] }));
    expect(outcome).toMatchObject({
      success: false,
      message: `the LLM gateway refused a model call: ${limit}`,
    });
  });

  it("fails when aider exits non-zero, quoting its last lines without the banner", () => {
    const outcome = aiderOutcome(
      facts({
        exitCode: 1,
        output: [...BANNER, "litellm.NotFoundError: model not found"].join("\n"),
        diff: "",
      }),
    );
    expect(outcome.success).toBe(false);
    expect(outcome.message).toBe("aider exited with code 1: litellm.NotFoundError: model not found");
  });

  it("fails when nothing changed, quoting what the model said", () => {
    const output = [
      ...BANNER,
      "drydock offline model: no rule matches this request.",
      "Tokens: 1k sent, 20 received.",
    ].join("\n");
    const outcome = aiderOutcome(facts({ output, diff: "" }));
    expect(outcome.success).toBe(false);
    expect(outcome.diff).toBe(
      "aider made no changes to the editable files. aider said:\ndrydock offline model: no rule matches this request.",
    );
  });

  it("says when edits to files that were not editable were undone", () => {
    const ok = aiderOutcome(facts({ reverted: ["test_greet.py"] }));
    expect(ok.success).toBe(true);
    expect(ok.message).toMatch(
      /aider also changed test_greet.py, which is not in relative_editable_files; that change was undone/,
    );
    const none = aiderOutcome(facts({ reverted: ["a.py", "b.py"], diff: "" }));
    expect(none.success).toBe(false);
    expect(none.message).toMatch(
      /a.py, b.py, which are not in relative_editable_files; those changes were undone/,
    );
  });

  it("reports a cancelled or timed-out run as a failure with what it changed so far", () => {
    const cancelled = aiderOutcome(facts({ exitCode: undefined, stopped: { reason: "cancelled" } }));
    expect(cancelled).toMatchObject({ success: false, message: "aider was cancelled and stopped." });
    expect(cancelled.diff).toContain(DIFF);
    const late = aiderOutcome(
      facts({ exitCode: undefined, diff: "", stopped: { reason: "timeout", timeoutS: 30 } }),
    );
    expect(late.diff).toMatch(/did not finish within 30 s.*timeout_s/);
  });
});

describe("lastEditFailure and summary", () => {
  it("finds nothing in a clean run", () => {
    expect(lastEditFailure(APPLIED)).toBeUndefined();
  });

  it("keeps the last lines and drops the banner and token counts", () => {
    expect(summary([...BANNER, "one", "", "Tokens: 1 sent", "two"])).toBe("one\ntwo");
    expect(summary(BANNER)).toBe("(no output)");
    expect(summary(["a", "b", "c"], 2)).toBe("b\nc");
  });
});
