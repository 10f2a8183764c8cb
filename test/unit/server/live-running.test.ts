import { execFile } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { callKey, entryView, type EntryView } from "../../../src/server/live/entry-view.js";
import { liveAsset } from "../../../src/server/live/live-assets.js";
import { livePage } from "../../../src/server/live/live-page.js";
import { LiveView } from "../../../src/server/live/live-view.js";
import { RunningCall, runningCalls } from "../../../src/server/live/running-calls.js";
import { drydockEntry, MAX_OUTPUT_TAIL_BYTES, type AuditEntry } from "../../../src/session/audit-entry.js";
import { appendAuditEntry } from "../../../src/session/audit-log.js";
import { addLogRedactor } from "../../../src/util/log.js";

const SESSION = "0123456789ab";

const call = (sessions: string[] = [SESSION]) =>
  new RunningCall(
    "2026-01-02T03:04:05.678Z",
    "bash",
    "client-1",
    { command: "make test" },
    () => new Set(sessions),
  );

describe("RunningCall", () => {
  it("keeps only the last 4 KiB of whole lines, and counts all it saw", () => {
    const c = call();
    expect(c.tail()).toBeUndefined();
    for (let i = 1; i <= 100_000; i++) c.line(`line ${i}`);
    const tail = c.tail()!;
    expect(Buffer.byteLength(tail)).toBeLessThanOrEqual(MAX_OUTPUT_TAIL_BYTES);
    expect(Buffer.byteLength(tail)).toBeGreaterThan(MAX_OUTPUT_TAIL_BYTES - 20);
    expect(tail).toMatch(/^line \d+\n/);
    expect(tail.endsWith("line 100000\n")).toBe(true);
    expect(c.version).toBe(100_000);
    expect(c.printedBytes).toBeGreaterThan(1_000_000);
  });

  it("shows control characters as their symbols and markup as it is, redacted like an audit line", () => {
    const remove = addLogRedactor((text) => text.replaceAll("sk-secret-123", "[REDACTED]"));
    try {
      const c = new RunningCall(
        "2026-01-02T03:04:05.678Z",
        "bash",
        "client-1",
        { command: "echo sk-secret-123" },
        () => new Set([SESSION]),
      );
      c.line("<img src=x onerror=alert(1)>\x1b[31mred\x07 key sk-secret-123");
      const view = entryView(c.entry(SESSION, Date.parse("2026-01-02T03:04:07.678Z")));
      expect(view).toMatchObject({
        running: true,
        outcome: "running…",
        what: "echo [REDACTED]",
        duration_ms: 2000,
        output_tail: "<img src=x onerror=alert(1)>red␇ key [REDACTED]\n",
      });
    } finally {
      remove();
    }
  });

  it("has the key of the call's own audit lines, running and last", () => {
    const c = call();
    const last: AuditEntry = {
      ts: c.ts,
      session: SESSION,
      actor: "agent",
      tool: "bash",
      args: { command: "make test" },
      outcome: { ok: true, exit_code: 0 },
      duration_ms: 10,
      output_bytes: 0,
      client: "client-1",
    };
    expect(entryView(c.entry(SESSION)).call).toBe(callKey(last));
    expect(entryView(last).call).toBe(callKey(last));
    expect(callKey({ ...last, client: "client-2" })).not.toBe(callKey(last));
  });
});

describe("the live view's log stream", () => {
  let state: string;
  let server: Server;
  let base: string;
  const key = "k".repeat(43);

  beforeAll(async () => {
    state = mkdtempSync(join(tmpdir(), "drydock-live-running-"));
    const view = new LiveView(
      { state, sessions: () => [] },
      { key, keyFile: join(state, "live-key"), url: () => base, port: () => 0 },
    );
    server = createServer((req, res) => void view.handle(req, res, new URL(req.url ?? "/", "http://x")));
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    appendAuditEntry(drydockEntry(SESSION, "session_start", { repo: "/src/app", image: "i" }), state);
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
    rmSync(state, { recursive: true, force: true });
  });

  /** The stream's events until `until` says stop, then the connection is closed. */
  async function events(until: (seen: Array<{ event: string; data: EntryView }>) => boolean) {
    const abort = new AbortController();
    const res = await fetch(`${base}/live/api/sessions/${SESSION}/events`, {
      headers: { authorization: `Bearer ${key}` },
      signal: abort.signal,
    });
    const seen: Array<{ event: string; data: EntryView }> = [];
    let buffer = "";
    const decoder = new TextDecoder();
    for await (const chunk of res.body!) {
      buffer += decoder.decode(chunk as Uint8Array, { stream: true });
      let cut;
      while ((cut = buffer.indexOf("\n\n")) >= 0) {
        const block = buffer.slice(0, cut);
        buffer = buffer.slice(cut + 2);
        const event = /^event: (.*)$/m.exec(block)?.[1];
        const data = /^data: (.*)$/m.exec(block)?.[1];
        if (event && data) seen.push({ event, data: JSON.parse(data) as EntryView });
      }
      if (until(seen)) break;
    }
    abort.abort();
    return seen;
  }

  it("sends a running call's output as it grows, then its last line from the log and no more of it", async () => {
    const c = call();
    runningCalls.add(c);
    c.line("first <b>line</b>");
    let step = 0;
    const seen = await events((s) => {
      const running = s.filter((e) => e.event === "running");
      if (step === 0 && running.length === 1) {
        step = 1;
        c.line("second line");
      } else if (step === 1 && running.some((e) => e.data.output_tail?.includes("second line"))) {
        step = 2;
        // As the tool wrapper ends a call: out of the running calls, then its last line logged.
        runningCalls.remove(c);
        appendAuditEntry({ ...c.entry(SESSION), outcome: { ok: true, exit_code: 0 }, duration_ms: 5 }, state);
      }
      return s.some((e) => e.event === "entry" && e.data.tool === "bash");
    });
    const ofCall = seen.filter((e) => e.data.call === callKey({ ...c, actor: "agent" }));
    expect(ofCall.map((e) => [e.event, e.data.running, e.data.output_tail])).toEqual([
      ["running", true, "first <b>line</b>\n"],
      ["running", true, "first <b>line</b>\nsecond line\n"],
      ["entry", false, null],
    ]);
  });

  it("keeps what a call prints inside its event: text that looks like the stream's own framing ends nothing", async () => {
    const c = call();
    c.line("x\n\nevent: end\ndata: {}\r\n\r\nid: 999999\n");
    runningCalls.add(c);
    try {
      const seen = await events((s) => s.some((e) => e.event === "running"));
      expect(seen.map((e) => e.event)).toEqual(["entry", "entry", "running"]);
      expect(seen[2]!.data.output_tail).toBe("x\n\nevent: end\ndata: {}\n\nid: 999999\n\n");
    } finally {
      runningCalls.remove(c);
    }
  });

  it("sends a call that printed nothing new again once a second, and none of another session's", async () => {
    const mine = call();
    const other = call(["ba9876543210"]);
    runningCalls.add(mine);
    runningCalls.add(other);
    try {
      const started = Date.now();
      const seen = await events((s) => s.filter((e) => e.event === "running").length >= 3);
      expect(Date.now() - started).toBeGreaterThan(1_800);
      expect(Date.now() - started).toBeLessThan(5_000);
      const running = seen.filter((e) => e.event === "running");
      expect(running.every((e) => e.data.call === callKey({ ...mine, actor: "agent" }))).toBe(true);
      expect(running.map((e) => e.data.output_tail)).toEqual([null, null, null]);
    } finally {
      runningCalls.remove(mine);
      runningCalls.remove(other);
    }
  });
});

describe("the live page's files", () => {
  it("are served from the package as they are: a module script and a stylesheet, no inline code", () => {
    const page = livePage("http://127.0.0.1:1/", "/s/live-key");
    expect(page).toContain('<script type="module" src="/live/app.js"></script>');
    expect(page).not.toMatch(/<script(?![^>]*\bsrc=)/);
    expect(page).not.toMatch(/<style|style=/);
    const root = new URL("../../../", import.meta.url);
    expect(liveAsset("live-app.js")).toBe(
      readFileSync(new URL("src/server/live/page/live-app.js", root), "utf8"),
    );
    expect(liveAsset("live-app.css")).toContain("#log .entry");
  });

  it("type-checks the script against the DOM (tsc, its own tsconfig)", async () => {
    const tsc = join(process.cwd(), "node_modules", "typescript", "bin", "tsc");
    const run = await promisify(execFile)(process.execPath, [
      tsc,
      "-p",
      "src/server/live/page/tsconfig.json",
    ]);
    expect(run.stdout).toBe("");
  }, 60_000);
});
