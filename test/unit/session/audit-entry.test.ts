import { describe, expect, it } from "vitest";
import {
  MAX_COMMAND_CHARS,
  MAX_OUTPUT_TAIL_BYTES,
  errorOutcome,
  gatewayEntry,
  outputBytes,
  outputTail,
  parseAuditLine,
  successOutcome,
  summarizeArgs,
} from "../../../src/session/audit-entry.js";

describe("audit entries", () => {
  it("keeps a bash command's text, capped, and says how long it was", () => {
    expect(summarizeArgs("bash", { command: "npm test", timeout_s: 30 })).toEqual({
      command: "npm test",
      timeout_s: 30,
    });
    const long = "x".repeat(MAX_COMMAND_CHARS + 10);
    const summary = summarizeArgs("bash", { command: long }).command as string;
    expect(summary.startsWith("x".repeat(MAX_COMMAND_CHARS))).toBe(true);
    expect(summary).toContain(`[${MAX_COMMAND_CHARS + 10} chars]`);
    expect(summary.length).toBeLessThan(MAX_COMMAND_CHARS + 40);
  });

  it("never logs a session's secret, not even its length", () => {
    expect(summarizeArgs("session_resume", { session_id: "0123456789ab", session_secret: "s3cret" })).toEqual(
      {
        session_id: "0123456789ab",
        session_secret: "(not logged)",
      },
    );
  });

  it("logs a file edit's path and kind, and its contents only as their size", () => {
    expect(
      summarizeArgs("file_editor", {
        operation: "replace",
        path: "src/a.py",
        old_string: "secret body",
        new_string: "other",
      }),
    ).toEqual({
      operation: "replace",
      path: "src/a.py",
      old_string: { chars: 11 },
      new_string: { chars: 5 },
    });
    expect(summarizeArgs("json_editor", { operation: "set", value: { a: [1, 2] } }).value).toEqual({
      json_chars: 11,
    });
  });

  it("counts a non-zero exit, a stopped command and an unsuccessful aider call as not ok", () => {
    expect(successOutcome({ exit_code: 0, timed_out: false, stdout: "x" })).toEqual({
      ok: true,
      exit_code: 0,
      timed_out: false,
    });
    expect(successOutcome({ exit_code: 2, timed_out: false }).ok).toBe(false);
    expect(successOutcome({ exit_code: null, timed_out: true })).toMatchObject({
      ok: false,
      exit_code: null,
      timed_out: true,
    });
    expect(
      successOutcome({
        success: false,
        model: "m",
        tokens: { input: 3, output: 4 },
        cost_usd: 0.5,
        diff: "…",
      }),
    ).toEqual({ ok: false, success: false, model: "m", tokens: { input: 3, output: 4 }, cost_usd: 0.5 });
    expect(successOutcome({ mode: "branch", branch: "b", commit: "c", files: [{}, {}] })).toEqual({
      ok: true,
      mode: "branch",
      branch: "b",
      commit: "c",
      files: 2,
    });
    expect(errorOutcome("e".repeat(5000)).error).toMatch(/\[5000 chars\]$/);
  });

  it("keeps the last 4 KiB of a command's output and aider's words, as plain text", () => {
    expect(successOutcome({ exit_code: 3, stdout: "hi\n", stderr: "", output: "hi\n" })).toEqual({
      ok: false,
      exit_code: 3,
      output_tail: "hi\n",
    });
    expect(successOutcome({ success: true, diff: "d", message: "Applied edit to a.py" }).output_tail).toBe(
      "Applied edit to a.py",
    );
    expect(successOutcome({ exit_code: 0, output: "" }).output_tail).toBeUndefined();
    const long = "é".repeat(3000) + "END";
    const tail = outputTail(long);
    expect(Buffer.byteLength(tail)).toBeLessThanOrEqual(MAX_OUTPUT_TAIL_BYTES);
    expect(tail.endsWith("éEND")).toBe(true);
    expect(tail).not.toContain("\ufffd");
    expect(outputTail("\x1b[31mred\x1b[0m\x1b]0;title\x07 a\rb\r\nc\x00\x1b(x")).toBe("red a␍b\nc␀␛(x");
  });

  it("measures a command's output as its stdout and stderr, other replies as their JSON", () => {
    expect(outputBytes({ stdout: "héllo", stderr: "!", output: "héllo!" })).toBe(7);
    expect(outputBytes({ a: 1 })).toBe(7);
  });

  it("records a model request with tokens, cost and whether the gateway refused it", () => {
    const refused = gatewayEntry(
      "0123456789ab",
      {
        provider: "openai",
        path: "/v1/chat/completions",
        model: "gpt-x",
        status: 429,
        source: "gateway",
        inputTokens: 0,
        outputTokens: 0,
        costUsd: 0,
        usageEstimated: false,
        durationMs: 3.4,
        refusal: { code: "limit", message: "LLM request limit reached" },
      },
      new Date("2026-01-01T00:00:00Z"),
    );
    expect(refused).toMatchObject({
      ts: "2026-01-01T00:00:00.000Z",
      session: "0123456789ab",
      actor: "agent",
      tool: "llm_request",
      args: { provider: "openai", model: "gpt-x" },
      outcome: { ok: false, refused: true, status: 429, error: "limit: LLM request limit reached" },
      duration_ms: 3,
    });
  });

  it("reads back a line and skips a torn one", () => {
    const line = JSON.stringify(
      gatewayEntry("0123456789ab", {
        provider: "offline",
        path: "/offline/v1/chat/completions",
        status: 200,
        source: "offline",
        inputTokens: 5,
        outputTokens: 7,
        costUsd: 0,
        usageEstimated: true,
        durationMs: 1,
      }),
    );
    expect(parseAuditLine(line)?.tool).toBe("llm_request");
    expect(parseAuditLine(line.slice(0, 20))).toBeUndefined();
    expect(parseAuditLine("")).toBeUndefined();
  });
});
