/**
 * `drydock sessions log` as text: one line per audit entry, for a person reading along. Pure; the
 * JSON lines themselves are what `--json` prints. Everything in a line but drydock's own words came
 * from the agent (its commands, paths, errors), so each field is made one safe line of text.
 */
import type { AuditEntry } from "../session/audit-entry.js";
import { auditArgsText, auditOutcomeText } from "../session/audit-text.js";
import { terminalLine } from "../util/terminal-text.js";

const MAX_SHOWN = 160;

/** One entry as a line: time, actor, tool, what it was asked, how it ended, time taken, output. */
export function formatAuditEntry(entry: AuditEntry): string {
  const time = String(entry.ts)
    .replace("T", " ")
    .replace(/\.\d+Z$/, "Z");
  const parts = [
    time,
    String(entry.actor).padEnd(7),
    String(entry.tool).padEnd(14),
    clip(auditArgsText(entry.tool, entry.args)),
    "→",
    auditOutcomeText(entry.outcome ?? { ok: false }, clip),
  ];
  const extras = [
    entry.duration_ms === null || entry.duration_ms === undefined ? "" : formatDuration(entry.duration_ms),
    entry.output_bytes === null || entry.output_bytes === undefined ? "" : formatBytes(entry.output_bytes),
  ].filter(Boolean);
  return terminalLine(`${parts.join(" ")}${extras.length ? `  (${extras.join(", ")})` : ""}`);
}

function clip(text: string): string {
  // Escaped before it is cut, so the cut counts what is shown.
  const oneLine = terminalLine(text.replace(/\r?\n/g, " ⏎ "));
  return oneLine.length > MAX_SHOWN ? `${oneLine.slice(0, MAX_SHOWN - 1)}…` : oneLine;
}

export function formatDuration(ms: number): string {
  if (ms < 1000) return `${ms}ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)}s`;
  return `${Math.floor(ms / 60_000)}m${String(Math.round((ms % 60_000) / 1000)).padStart(2, "0")}s`;
}

export function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KB`;
  return `${(bytes / (1024 * 1024)).toFixed(1)} MB`;
}
