/**
 * One audit entry as the live page shows it: what was asked and how it ended, as plain text the
 * page puts in with textContent. Pure.
 */
import type { AuditEntry, AuditOutcome } from "../../session/audit-entry.js";
import { auditArgsText } from "../../session/audit-text.js";

export interface EntryView {
  ts: string;
  actor: string;
  tool: string;
  /** What the call was asked: the command, the file, the model… */
  what: string;
  /** How it ended: exit code, error, tokens and cost… */
  outcome: string;
  ok: boolean;
  running: boolean;
  duration_ms: number | null;
  output_bytes: number | null;
}

function outcomeOf(o: AuditOutcome): string {
  if (o.running) return "running…";
  if (typeof o.error === "string")
    return `${o.refused ? "refused" : "error"}: ${o.error.split("\n")[0] ?? ""}`;
  const bits: string[] = [];
  if (typeof o.exit_code === "number") bits.push(`exit ${o.exit_code}`);
  else if (o.exit_code === null) bits.push(o.timed_out ? "timed out" : "stopped");
  if (typeof o.status === "number") bits.push(String(o.status));
  if (o.success === true) bits.push("done");
  if (o.success === false) bits.push("failed");
  const tokens = o.tokens as { input?: number; output?: number } | undefined;
  if (tokens && (tokens.input || tokens.output))
    bits.push(`${tokens.input ?? 0}+${tokens.output ?? 0} tokens`);
  if (typeof o.cost_usd === "number" && o.cost_usd > 0) bits.push(`$${o.cost_usd.toFixed(4)}`);
  if (typeof o.files === "number") bits.push(`${o.files} file(s)`);
  if (typeof o.branch === "string") bits.push(`branch ${o.branch}`);
  if (bits.length === 0) bits.push(o.ok ? "ok" : "not ok");
  return bits.join(", ");
}

export function entryView(entry: AuditEntry): EntryView {
  const outcome = entry.outcome ?? { ok: false };
  return {
    ts: entry.ts,
    actor: entry.actor,
    tool: entry.tool,
    what: auditArgsText(entry.tool, entry.args ?? {}),
    outcome: outcomeOf(outcome),
    ok: outcome.ok === true,
    running: outcome.running === true,
    duration_ms: entry.duration_ms ?? null,
    output_bytes: entry.output_bytes ?? null,
  };
}

/** What a session's log adds up to: calls made, model requests, tokens and cost. */
export interface LogTally {
  calls: number;
  llm_requests: number;
  refused: number;
  input_tokens: number;
  output_tokens: number;
  usd: number;
  first_ts: string | null;
  last_ts: string | null;
  repo: string | null;
  ended: boolean;
}

export function emptyTally(): LogTally {
  return {
    calls: 0,
    llm_requests: 0,
    refused: 0,
    input_tokens: 0,
    output_tokens: 0,
    usd: 0,
    first_ts: null,
    last_ts: null,
    repo: null,
    ended: false,
  };
}

/** Adds entries to a tally (in place); a "running" line is not a call of its own. */
export function tallyEntries(tally: LogTally, entries: readonly AuditEntry[]): LogTally {
  for (const e of entries) {
    tally.first_ts ??= e.ts;
    tally.last_ts = e.ts;
    if (e.tool === "session_start" && typeof e.args?.repo === "string") tally.repo ??= e.args.repo;
    if (e.tool === "session_end") tally.ended = true;
    if (e.outcome?.running) continue;
    if (e.tool === "llm_request") {
      if (e.outcome.refused) {
        tally.refused++;
        continue;
      }
      const tokens = e.outcome.tokens as { input?: number; output?: number } | undefined;
      tally.llm_requests++;
      tally.input_tokens += tokens?.input ?? 0;
      tally.output_tokens += tokens?.output ?? 0;
      tally.usd += typeof e.outcome.cost_usd === "number" ? e.outcome.cost_usd : 0;
    } else if (e.actor !== "drydock") {
      tally.calls++;
    }
  }
  return tally;
}
