import { describe, expect, it } from "vitest";
import { formatAuditEntry } from "../../../src/cli/audit-lines.js";
import { matchSessionId } from "../../../src/cli/session-target.js";
import { auditSummary, LAST_COMMANDS } from "../../../src/cli/session-show.js";
import type { AuditEntry } from "../../../src/session/audit-entry.js";

const entry = (over: Partial<AuditEntry>): AuditEntry => ({
  ts: "2026-01-02T03:04:05.678Z",
  session: "0123456789ab",
  actor: "agent",
  tool: "bash",
  args: {},
  outcome: { ok: true },
  duration_ms: 1500,
  output_bytes: 2048,
  ...over,
});

describe("session ids on the command line", () => {
  const known = ["0123456789ab", "0123ffffffff", "abcdefabcdef"];
  it("takes a whole id or a unique prefix", () => {
    expect(matchSessionId("abcdefabcdef", known)).toBe("abcdefabcdef");
    expect(matchSessionId("ABC", known)).toBe("abcdefabcdef");
    expect(matchSessionId("01234", known)).toBe("0123456789ab");
  });
  it("lists the sessions a short prefix matches", () => {
    expect(() => matchSessionId("0123", known)).toThrow(
      /0123 matches 2 sessions \(0123456789ab, 0123ffffffff\); give more of the id/,
    );
  });
  it("says how to find ids for an unknown or malformed one", () => {
    expect(() => matchSessionId("fff", known)).toThrow(/no session fff .*`drydock sessions list`/);
    expect(() => matchSessionId("../x", known)).toThrow(/is not a session id .*`drydock sessions list`/);
  });
});

describe("the log as text", () => {
  it("puts time, actor, tool, what was asked and how it ended on one line", () => {
    expect(
      formatAuditEntry(
        entry({ args: { command: "npm test\nnpm run lint" }, outcome: { ok: false, exit_code: 1 } }),
      ),
    ).toBe("2026-01-02 03:04:05Z agent   bash           npm test ⏎ npm run lint → exit 1  (1.5s, 2.0 KB)");
    expect(
      formatAuditEntry(
        entry({
          tool: "llm_request",
          args: { provider: "openai", model: "gpt-4o" },
          outcome: { ok: false, refused: true, error: "limit: LLM request limit reached" },
          duration_ms: 3,
          output_bytes: null,
        }),
      ),
    ).toMatch(/llm_request\s+openai gpt-4o → refused: limit: LLM request limit reached  \(3ms\)$/);
    expect(
      formatAuditEntry(entry({ tool: "probe", outcome: { ok: false, running: true }, duration_ms: null })),
    ).toMatch(/→ running…  \(2.0 KB\)$/);
  });
});

describe("show's summary of a log", () => {
  it("adds up model requests apart from refusals and keeps the last commands, finished ones only", () => {
    const entries = [
      entry({ tool: "llm_request", outcome: { ok: true, tokens: { input: 10, output: 5 }, cost_usd: 0.25 } }),
      entry({ tool: "llm_request", outcome: { ok: true, tokens: { input: 1, output: 2 }, cost_usd: 0.5 } }),
      entry({ tool: "llm_request", outcome: { ok: false, refused: true, error: "x" } }),
      entry({ actor: "drydock", tool: "session_start" }),
      ...Array.from({ length: LAST_COMMANDS + 2 }, (_, i) => entry({ args: { command: `c${i}` } })),
      entry({ args: { command: "still running" }, outcome: { ok: false, running: true } }),
      entry({ actor: "person", tool: "person_command", args: { command: "ls" } }),
    ];
    const s = auditSummary(entries);
    expect(s.cost).toEqual({ llm_requests: 2, refused: 1, input_tokens: 11, output_tokens: 7, usd: 0.75 });
    expect(s.last_commands.map((e) => e.args.command)).toEqual([
      ...Array.from({ length: LAST_COMMANDS - 1 }, (_, i) => `c${i + 3}`),
      "ls",
    ]);
    expect(s.calls).toBe(LAST_COMMANDS + 3);
  });
});
