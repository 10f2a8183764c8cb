/**
 * A session's audit log read as one entry per call. A call still running after a moment leaves a
 * "running" line, then its result when it ends (so a watcher, and a crash, see it); read after
 * the fact, the running line of a call that ended is folded into its result. A running line with
 * no result after the server that ran it stopped (the log goes on with the session kept, adopted or
 * ended) is shown as interrupted, not as running forever. Pure.
 */
import type { AuditEntry } from "./audit-entry.js";

/** Lines that mean the server that wrote the earlier lines is gone (or the session is). */
const SERVER_CHANGED = new Set(["session_kept", "session_adopted", "session_end"]);

const callKey = (e: AuditEntry) => JSON.stringify([e.session, e.tool, e.ts, e.client ?? null, e.actor]);

/** The entries with each finished call's running line dropped, and unfinished ones of a stopped server marked interrupted. */
export function auditCalls(entries: readonly AuditEntry[]): AuditEntry[] {
  const finished = new Set<string>();
  const out: AuditEntry[] = [];
  let serverChanged = false;
  // From the end: a running line is kept only when no later line finishes its call.
  for (let i = entries.length - 1; i >= 0; i--) {
    const e = entries[i]!;
    if (e.outcome?.running === true) {
      if (finished.has(callKey(e))) continue;
      out.push(
        serverChanged
          ? {
              ...e,
              outcome: {
                ok: false,
                error: "interrupted: the drydock serving this call stopped before it ended",
                interrupted: true,
              },
            }
          : e,
      );
      continue;
    }
    finished.add(callKey(e));
    if (SERVER_CHANGED.has(e.tool)) serverChanged = true;
    out.push(e);
  }
  return out.reverse();
}
