/**
 * `drydock sessions log ID [--follow] [--json]`: a session's audit log, as lines for a person or as
 * the JSON lines themselves. With --follow it keeps printing what is appended, until the session
 * ends (its server removed it, or its box is gone) or the person presses Ctrl-C.
 */
import type { BoxEngine } from "../engine/box-engine.js";
import { LABEL_SESSION } from "../engine/labels.js";
import type { AuditEntry } from "../session/audit-entry.js";
import { auditCalls } from "../session/audit-calls.js";
import { readAuditLog } from "../session/audit-log.js";
import { terminalJson } from "../util/terminal-text.js";
import { formatAuditEntry } from "./audit-lines.js";
import type { SessionTarget } from "./session-target.js";

export interface LogOptions {
  follow?: boolean;
  json?: boolean;
  /** How often a followed log is read again; default 250 ms. */
  pollMs?: number;
  /** How often a followed session's box is looked for; default 2,000 ms. */
  boxCheckMs?: number;
  signal?: AbortSignal;
}

/** Prints the log to `out`; with `follow`, returns once the session has ended or `signal` aborts. */
export async function printSessionLog(
  engine: BoxEngine | undefined,
  target: SessionTarget,
  options: LogOptions,
  out: { write(text: string): unknown },
  err: { write(text: string): unknown },
): Promise<void> {
  const print = (entries: AuditEntry[]) => {
    for (const e of entries) out.write(options.json ? terminalJson(e) + "\n" : formatAuditEntry(e) + "\n");
  };
  let read = await readAuditLog(target.logPath);
  // What is already there, one entry per call; with --follow, what comes later as it comes (a long
  // call's "running" line, then its result).
  print(auditCalls(read.entries));
  const ended = (entries: AuditEntry[]) => entries.some((e) => e.tool === "session_end");
  if (!options.follow) {
    if (read.entries.length === 0)
      err.write(`session ${target.id} has nothing in its log yet (${target.logPath})\n`);
    return;
  }
  if (ended(read.entries) || !target.box) {
    err.write(`session ${target.id} has ended; nothing more will be logged\n`);
    return;
  }
  const pollMs = options.pollMs ?? 250;
  const boxCheckMs = options.boxCheckMs ?? 2000;
  let lastBoxCheck = Date.now();
  while (!options.signal?.aborted) {
    await sleep(pollMs, options.signal);
    read = await readAuditLog(target.logPath, read.offset);
    print(read.entries);
    if (ended(read.entries)) return;
    if (engine && Date.now() - lastBoxCheck >= boxCheckMs) {
      lastBoxCheck = Date.now();
      const boxes = await engine.listBoxes(LABEL_SESSION, target.id).catch(() => undefined);
      if (boxes && boxes.length === 0) {
        print((await readAuditLog(target.logPath, read.offset)).entries);
        err.write(`the box of session ${target.id} is gone; nothing more will be logged\n`);
        return;
      }
    }
  }
}

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal?.removeEventListener("abort", done);
      resolve();
    }
    signal?.addEventListener("abort", done, { once: true });
  });
}
