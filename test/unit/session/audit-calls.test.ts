import { describe, expect, it } from "vitest";
import { auditCalls } from "../../../src/session/audit-calls.js";
import type { AuditEntry } from "../../../src/session/audit-entry.js";

const entry = (tool: string, ts: string, outcome: AuditEntry["outcome"]): AuditEntry => ({
  ts,
  session: "s1",
  actor: "agent",
  tool,
  args: {},
  outcome,
  duration_ms: outcome.running ? null : 5000,
  output_bytes: null,
  client: "c1",
});

describe("auditCalls", () => {
  it("folds a finished call's running line into its result: one entry per call", () => {
    const log = [
      entry("bash", "2026-11-25T00:00:00.000Z", { ok: false, running: true }),
      entry("git_diff", "2026-11-25T00:00:01.000Z", { ok: true }),
      entry("bash", "2026-11-25T00:00:00.000Z", { ok: true, exit_code: 0 }),
    ];
    // In the order the calls ended, as the log has them.
    expect(auditCalls(log).map((e) => [e.tool, e.outcome.running ?? false])).toEqual([
      ["git_diff", false],
      ["bash", false],
    ]);
  });

  it("keeps a call still running, and marks one cut off by its server's end as interrupted", () => {
    const running = entry("bash", "2026-11-25T00:00:00.000Z", { ok: false, running: true });
    expect(auditCalls([running])[0]!.outcome).toEqual({ ok: false, running: true });
    const afterCrash = auditCalls([
      running,
      entry("session_adopted", "2026-11-25T01:00:00.000Z", { ok: true }),
    ]);
    expect(afterCrash[0]!.outcome).toMatchObject({
      ok: false,
      interrupted: true,
      error: expect.stringMatching(/^interrupted/),
    });
    expect(afterCrash).toHaveLength(2);
  });

  it("does not fold calls of another client or another start time", () => {
    const a = entry("bash", "2026-11-25T00:00:00.000Z", { ok: false, running: true });
    const b = { ...entry("bash", "2026-11-25T00:00:00.000Z", { ok: true }), client: "c2" };
    expect(auditCalls([a, b])).toHaveLength(2);
  });
});
