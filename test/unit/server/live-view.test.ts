import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { appendAuditEntry } from "../../../src/session/audit-log.js";
import { LiveData } from "../../../src/server/live/live-data.js";
import { drydockEntry, gatewayEntry, type AuditEntry } from "../../../src/session/audit-entry.js";
import { emptyTally, entryView, tallyEntries } from "../../../src/server/live/entry-view.js";
import {
  LIVE_PASS_MAX_AGE_S,
  bearerOf,
  livePass,
  livePassValid,
  queryKeyMatches,
} from "../../../src/server/live/live-auth.js";
import { escapeHtml, livePage, signInPage } from "../../../src/server/live/live-page.js";

describe("the live view's pass", () => {
  const now = Date.UTC(2026, 0, 2, 3, 4, 5);

  it("carries its issue time and an HMAC over port and time, never the key", () => {
    const value = livePass("s3cret-key", 8765, now);
    expect(value).not.toContain("s3cret");
    expect(value).toMatch(new RegExp(`^${Math.floor(now / 1000)}\\.[A-Za-z0-9_-]{43}$`));
    expect(livePass("other-key", 8765, now)).not.toBe(value);
    expect(livePass("s3cret-key", 8766, now)).not.toBe(value);
    expect(LIVE_PASS_MAX_AGE_S).toBe(12 * 3600);
  });

  it("is valid only as minted by this key for this port, within its age", () => {
    const value = livePass("k", 80, now);
    expect(livePassValid(value, "k", 80, now)).toBe(true);
    expect(livePassValid("k", "k", 80, now)).toBe(false);
    expect(livePassValid(value, "other", 80, now)).toBe(false);
    // Another port's pass.
    expect(livePassValid(livePass("k", 81, now), "k", 80, now)).toBe(false);
    // Past its age, or issued later than the clock allows; a changed time breaks the MAC.
    const later = now + LIVE_PASS_MAX_AGE_S * 1000;
    expect(livePassValid(value, "k", 80, later)).toBe(true);
    expect(livePassValid(value, "k", 80, later + 1000)).toBe(false);
    expect(livePassValid(livePass("k", 80, now + 3_600_000), "k", 80, now)).toBe(false);
    const moved = `${Math.floor(later / 1000)}.${value.split(".")[1]}`;
    expect(livePassValid(moved, "k", 80, later + 1000)).toBe(false);
  });

  it("is read from a bearer header only; the query key is compared exactly", () => {
    expect(bearerOf("Bearer abc.def")).toBe("abc.def");
    expect(bearerOf("bearer  abc ")).toBe("abc");
    expect(bearerOf("Basic abc")).toBeUndefined();
    expect(bearerOf(undefined)).toBeUndefined();
    expect(queryKeyMatches("k", "k")).toBe(true);
    expect(queryKeyMatches("k ", "k")).toBe(false);
    expect(queryKeyMatches(null, "k")).toBe(false);
  });
});

describe("entryView", () => {
  const bash = (command: string, outcome: AuditEntry["outcome"]): AuditEntry => ({
    ts: "2026-01-02T03:04:05.678Z",
    session: "0123456789ab",
    actor: "agent",
    tool: "bash",
    args: { command, session_id: "0123456789ab" },
    outcome,
    duration_ms: 12,
    output_bytes: 3,
  });

  it("says what a command was and how it ended, keeping its text as it was", () => {
    const view = entryView(bash("echo '<b>hi</b>'", { ok: false, exit_code: 2 }));
    expect(view).toMatchObject({ what: "echo '<b>hi</b>'", outcome: "exit 2", ok: false, running: false });
    expect(entryView(bash("sleep 9", { ok: false, running: true }))).toMatchObject({
      outcome: "running…",
      running: true,
    });
    expect(entryView(bash("sleep 9", { ok: false, exit_code: null, timed_out: true })).outcome).toBe(
      "timed out",
    );
  });

  it("adds up calls, model requests, tokens and cost, and sees the session's end", () => {
    const llm = (input: number, output: number, costUsd: number) =>
      gatewayEntry("0123456789ab", {
        provider: "openai",
        path: "/v1/chat/completions",
        model: "m",
        status: 200,
        source: "live",
        inputTokens: input,
        outputTokens: output,
        costUsd,
        usageEstimated: false,
        durationMs: 5,
      });
    const tally = tallyEntries(emptyTally(), [
      drydockEntry("0123456789ab", "session_start", { repo: "/src/app", image: "i" }),
      bash("true", { ok: false, running: true }),
      bash("true", { ok: true, exit_code: 0 }),
      llm(100, 20, 0.5),
      llm(1, 2, 0.25),
    ]);
    expect(tally).toMatchObject({
      calls: 1,
      llm_requests: 2,
      input_tokens: 101,
      output_tokens: 22,
      usd: 0.75,
      repo: "/src/app",
      ended: false,
    });
    tallyEntries(tally, [drydockEntry("0123456789ab", "session_end")]);
    expect(tally.ended).toBe(true);
  });
});

describe("the sign-in page", () => {
  it("says where the live key is, escaped, and that the MCP token does not open the page", () => {
    const page = signInPage("http://127.0.0.1:1/", "/home/a<b>/live-key", false);
    expect(page).toContain("?token=KEY");
    expect(page).toContain("/home/a&lt;b&gt;/live-key");
    expect(page).not.toContain("a<b>");
    expect(page).toContain("not the MCP bearer token");
    expect(signInPage("http://127.0.0.1:1/", "/s/live-key", true)).toMatch(/not this server's live key/);
    expect(escapeHtml(`<"'&>`)).toBe("&lt;&quot;&#39;&amp;&gt;");
    // The page itself: how to sign in, hidden until its script finds no pass; nothing secret.
    const live = livePage("http://127.0.0.1:1/", "/home/a<b>/live-key");
    expect(live).toContain('<section id="sign-in" hidden>');
    expect(live).toContain("/home/a&lt;b&gt;/live-key");
    expect(live).toContain("no cookie is set");
  });
});

describe("LiveData", () => {
  it("counts each logged model request once, however many pages read the log at the same time", async () => {
    const state = mkdtempSync(join(tmpdir(), "drydock-live-"));
    try {
      const id = "0123456789ab";
      const llm = () =>
        gatewayEntry(id, {
          provider: "openai",
          path: "/v1/chat/completions",
          model: "m",
          status: 200,
          source: "live",
          inputTokens: 10,
          outputTokens: 2,
          costUsd: 0.0789,
          usageEstimated: false,
          durationMs: 5,
        });
      appendAuditEntry(drydockEntry(id, "session_start", { repo: "/src/app", image: "i" }), state);
      const data = new LiveData({ state, sessions: () => [] });
      expect((await data.detail(id)).usage.usd).toBe(0);
      appendAuditEntry(llm(), state);
      // The list and the detail refresh together, as the page's two timers do.
      const [list, detail, again] = await Promise.all([data.sessions(), data.detail(id), data.detail(id)]);
      expect(list[0]!.cost_usd).toBe(0.0789);
      expect(detail.usage).toMatchObject({ llm_requests: 1, usd: 0.0789, input_tokens: 10 });
      expect(again.usage.llm_requests).toBe(1);
      appendAuditEntry(llm(), state);
      const both = await Promise.all(Array.from({ length: 5 }, () => data.detail(id)));
      for (const d of both) expect(d.usage).toMatchObject({ llm_requests: 2, usd: 0.1578 });
    } finally {
      rmSync(state, { recursive: true, force: true });
    }
  });
});
