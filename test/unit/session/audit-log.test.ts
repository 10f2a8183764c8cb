import { appendFileSync, existsSync, mkdtempSync, readFileSync, rmSync, statSync, utimesSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { drydockEntry, type AuditEntry } from "../../../src/session/audit-entry.js";
import { formatAuditEntry } from "../../../src/cli/audit-lines.js";
import {
  AUDIT_LOG_FULL,
  DEFAULT_AUDIT_LOG_MAX_MIB,
  appendAuditEntry,
  auditEntriesNotLogged,
  auditLogMaxBytes,
  auditDir,
  auditLogPath,
  auditedSessions,
  pruneAuditLogs,
  readAuditLog,
} from "../../../src/session/audit-log.js";
import { addLogRedactor } from "../../../src/util/log.js";

const ID = "0123456789ab";

describe("audit log files", () => {
  const dirs: string[] = [];
  const state = () => {
    const dir = mkdtempSync(join(tmpdir(), "drydock-audit-"));
    dirs.push(dir);
    return dir;
  };
  afterEach(() => {
    for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
  });

  it("prune removes the logs of sessions without a box last written long enough ago, and no other", async () => {
    const dir = state();
    const day = 86_400_000;
    const now = Date.now();
    const ids = { old: "aaaaaaaaaaaa", recent: "bbbbbbbbbbbb", boxed: "cccccccccccc" };
    for (const id of Object.values(ids))
      appendAuditEntry(drydockEntry(id, "session_start", { repo: "/r" }), dir);
    const age = (id: string, days: number) => {
      const when = new Date(now - days * day);
      utimesSync(auditLogPath(id, dir)!, when, when);
    };
    age(ids.old, 40);
    age(ids.recent, 3);
    age(ids.boxed, 40);
    const removed = await pruneAuditLogs(30 * day, new Set([ids.boxed]), dir, now);
    expect(removed).toEqual([ids.old]);
    expect(existsSync(auditLogPath(ids.old, dir)!)).toBe(false);
    expect((await auditedSessions(dir)).sort()).toEqual([ids.recent, ids.boxed]);
    expect(await pruneAuditLogs(0, new Set(), dir, now)).toHaveLength(2);
  });

  it("appends one JSON line per entry in a 0700 directory, file 0600", async () => {
    const dir = state();
    appendAuditEntry(drydockEntry(ID, "session_start", { repo: "/r" }), dir);
    appendAuditEntry(drydockEntry(ID, "session_end"), dir);
    const path = auditLogPath(ID, dir)!;
    expect(path).toBe(join(dir, "audit", `${ID}.jsonl`));
    expect(statSync(auditDir(dir)).mode & 0o777).toBe(0o700);
    expect(statSync(path).mode & 0o777).toBe(0o600);
    const lines = readFileSync(path, "utf8").split("\n");
    expect(lines).toHaveLength(3);
    expect(lines[2]).toBe("");
    const read = await readAuditLog(path);
    expect(read.entries.map((e) => e.tool)).toEqual(["session_start", "session_end"]);
    expect(read.offset).toBe(Buffer.byteLength(readFileSync(path)));
    expect(await auditedSessions(dir)).toEqual([ID]);
  });

  it("redacts every string with the log redactors", async () => {
    const dir = state();
    const secret = "sk-very-secret-value-123";
    const remove = addLogRedactor((t) => t.split(secret).join("[redacted]"));
    try {
      appendAuditEntry(drydockEntry(ID, "session_start", { note: `key=${secret}`, list: [secret] }), dir);
    } finally {
      remove();
    }
    const text = readFileSync(auditLogPath(ID, dir)!, "utf8");
    expect(text).not.toContain(secret);
    expect(JSON.parse(text).args).toEqual({ note: "key=[redacted]", list: ["[redacted]"] });
  });

  it("reads on from an offset and leaves a torn last line for the next read", async () => {
    const dir = state();
    appendAuditEntry(drydockEntry(ID, "session_start"), dir);
    const path = auditLogPath(ID, dir)!;
    const first = await readAuditLog(path);
    appendFileSync(path, '{"ts":"2026-01-01T00:00:00Z","actor":"person","tool":"person_co');
    const torn = await readAuditLog(path, first.offset);
    expect(torn).toEqual({ entries: [], offset: first.offset });
    appendFileSync(path, 'mmand","session":"0123456789ab","args":{},"outcome":{"ok":true}}\n');
    const whole = await readAuditLog(path, first.offset);
    expect(whole.entries.map((e) => e.tool)).toEqual(["person_command"]);
  });

  it("writes nothing for an id that is not a session's, and reads nothing from a missing file", async () => {
    const dir = state();
    appendAuditEntry(drydockEntry("../../etc/x", "session_start"), dir);
    expect(auditLogPath("../../etc/x", dir)).toBeUndefined();
    expect(await auditedSessions(dir)).toEqual([]);
    expect(await readAuditLog(join(dir, "none.jsonl"))).toEqual({ entries: [], offset: 0 });
  });

  describe("its size cap", () => {
    const call = (i: number): AuditEntry => ({
      ts: new Date().toISOString(),
      session: ID,
      actor: "agent",
      tool: "bash",
      args: { command: `echo ${i} ${"x".repeat(900)}` },
      outcome: { ok: true, exit_code: 0 },
      duration_ms: 1,
      output_bytes: 2,
    });

    it("writes entries until the cap, then one marker, then none of the agent's: the session's end counts them", async () => {
      const dir = state();
      const cap = 10_000;
      for (let i = 0; i < 40; i++) appendAuditEntry(call(i), dir, cap);
      appendAuditEntry(drydockEntry(ID, "session_end", { box: "b" }), dir, cap);
      const path = auditLogPath(ID, dir)!;
      const { entries } = await readAuditLog(path);
      const marker = entries.findIndex((e) => e.tool === AUDIT_LOG_FULL);
      const written = entries.filter((e) => e.tool === "bash").length;
      // Entries stop at the one that reaches the cap; the marker follows it, then the end alone.
      expect(written).toBeGreaterThan(5);
      expect(written).toBeLessThan(40);
      expect(marker).toBe(written);
      expect(entries.map((e) => e.tool).slice(marker)).toEqual([AUDIT_LOG_FULL, "session_end"]);
      expect(entries.filter((e) => e.tool === AUDIT_LOG_FULL)).toHaveLength(1);
      expect(entries.at(-1)!.args.entries_not_logged).toBe(40 - written);
      expect(auditEntriesNotLogged(ID, dir)).toBe(40 - written);
      // Bounded: the cap, plus the one entry that crossed it, the marker and the end.
      expect(statSync(path).size).toBeLessThan(cap + 3_000);
      const shown = formatAuditEntry(entries[marker]!);
      expect(shown).toContain(AUDIT_LOG_FULL);
      expect(shown).toContain("audit log cap of");
      expect(shown).toContain("DRYDOCK_AUDIT_LOG_MAX_MIB");
    });

    it("is kept by every writer, since it is read from the file; a person's entries still go in", async () => {
      const dir = state();
      const path = auditLogPath(ID, dir)!;
      for (let i = 0; i < 20; i++) appendAuditEntry(call(i), dir, 5_000);
      const size = statSync(path).size;
      // Another process's writes are appends to the same file: the size says it is full.
      appendAuditEntry({ ...call(99), client: "other" }, dir, 5_000);
      expect(statSync(path).size).toBe(size);
      // What a person typed in `sessions shell`, and a person's checkpoint, are still written.
      appendAuditEntry({ ...call(100), actor: "person", tool: "person_command" }, dir, 5_000);
      appendAuditEntry(drydockEntry(ID, "session_checkpoint", { name: "n", by: "command line" }), dir, 5_000);
      const tools = (await readAuditLog(path)).entries.map((e) => e.tool);
      expect(tools.slice(tools.indexOf(AUDIT_LOG_FULL))).toEqual([
        AUDIT_LOG_FULL,
        "person_command",
        "session_checkpoint",
      ]);
    });

    it("is 64 MiB by default, DRYDOCK_AUDIT_LOG_MAX_MIB sets it, and a bad value keeps the default", () => {
      expect(DEFAULT_AUDIT_LOG_MAX_MIB).toBe(64);
      expect(auditLogMaxBytes(undefined)).toBe(64 * 1024 * 1024);
      expect(auditLogMaxBytes("256")).toBe(256 * 1024 * 1024);
      expect(auditLogMaxBytes("0.5")).toBe(512 * 1024);
      for (const bad of ["0", "-1", "lots", "Infinity"]) expect(auditLogMaxBytes(bad)).toBe(64 * 1024 * 1024);
    });
  });
});
