import { appendFileSync, existsSync, mkdtempSync, readFileSync, rmSync, statSync, utimesSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { drydockEntry } from "../../../src/session/audit-entry.js";
import {
  appendAuditEntry,
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
});
