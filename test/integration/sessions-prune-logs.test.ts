/**
 * `drydock sessions prune --logs-older-than DAYS` through the CLI, in a state directory of the
 * test's own: an old log of a session with no box goes, a recent one stays, a bad value is exit 2.
 */
import { execFile } from "node:child_process";
import { existsSync, mkdtempSync, rmSync, utimesSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, describe, expect, it } from "vitest";
import { drydockEntry } from "../../src/session/audit-entry.js";
import { appendAuditEntry, auditLogPath } from "../../src/session/audit-log.js";

const run = promisify(execFile);
const cli = join(process.cwd(), "dist", "cli", "main.js");

describe("sessions prune --logs-older-than", () => {
  const state = mkdtempSync(join(tmpdir(), "drydock-prune-logs-"));
  afterAll(() => rmSync(state, { recursive: true, force: true }));
  const drydock = (args: string[]) =>
    run("node", [cli, ...args], { env: { ...process.env, DRYDOCK_STATE_DIR: state } }).then(
      (r) => ({ code: 0, ...r }),
      (e: { code: number; stdout: string; stderr: string }) => e,
    );

  it("removes the old logs of sessions without a box and keeps the recent ones", async () => {
    const old = "01d000000000";
    const recent = "7ece17000000";
    for (const id of [old, recent]) appendAuditEntry(drydockEntry(id, "session_end", { box: "b" }), state);
    const longAgo = new Date(Date.now() - 45 * 86_400_000);
    utimesSync(auditLogPath(old, state)!, longAgo, longAgo);
    const r = await drydock(["sessions", "prune", "--logs-older-than", "30"]);
    expect(r).toMatchObject({ code: 0 });
    expect(r.stdout).toMatch(
      /^removed 0 box\(es\); kept \d+\nremoved 1 audit log\(s\) of sessions without a box/,
    );
    expect(existsSync(auditLogPath(old, state)!)).toBe(false);
    expect(existsSync(auditLogPath(recent, state)!)).toBe(true);
  });

  it("refuses a value that is not a number of days, before removing anything", async () => {
    const r = await drydock(["sessions", "prune", "--logs-older-than", "-1"]);
    expect(r).toMatchObject({ code: 2 });
    expect(r.stderr).toMatch(
      /--logs-older-than: "-1" is not a number of 0 or more; write e\.g\. --logs-older-than 30/,
    );
  });
});
