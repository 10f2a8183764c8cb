/**
 * One audit entry as the live page shows it: what was asked and how it ended, as plain text the
 * page puts in with textContent. Pure.
 */
import type { AuditEntry } from "../../session/audit-entry.js";
import { auditArgsText, auditOutcomeText } from "../../session/audit-text.js";

export interface EntryView {
  /**
   * Which call the line is of: a running call's lines (its "running" line, what it has printed so
   * far, its last line) share it, so the page updates one line in place.
   */
  call: string;
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
  /** A command's exit code, when it has one. */
  exit_code: number | null;
  /** The error in full (the outcome has its first line). */
  error: string | null;
  /** The last 4 KiB of what the call printed (a command's output, aider's reply). */
  output_tail: string | null;
}

export function entryView(entry: AuditEntry): EntryView {
  const outcome = entry.outcome ?? { ok: false };
  return {
    call: callKey(entry),
    ts: entry.ts,
    actor: entry.actor,
    tool: entry.tool,
    what: auditArgsText(entry.tool, entry.args ?? {}),
    outcome: auditOutcomeText(outcome),
    ok: outcome.ok === true,
    running: outcome.running === true,
    duration_ms: entry.duration_ms ?? null,
    output_bytes: entry.output_bytes ?? null,
    exit_code: typeof outcome.exit_code === "number" ? outcome.exit_code : null,
    error: typeof outcome.error === "string" ? outcome.error : null,
    output_tail: typeof outcome.output_tail === "string" ? outcome.output_tail : null,
  };
}

/**
 * The key of the call an entry is of: its start time (to the millisecond), who made it and which
 * tool. Each of a call's lines carries the same three; two calls share them only when one client
 * starts the same tool twice within a millisecond, and then the page merely shows their lines on
 * one row until each has ended.
 */
export function callKey(entry: Pick<AuditEntry, "ts" | "actor" | "tool" | "client">): string {
  return `${entry.ts} ${entry.actor} ${entry.tool} ${entry.client ?? ""}`;
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
