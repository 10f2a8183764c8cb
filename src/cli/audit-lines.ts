/**
 * `drydock sessions log` as text: one line per audit entry, for a person reading along. Pure; the
 * JSON lines themselves are what `--json` prints.
 */
import type { AuditEntry, AuditOutcome } from "../session/audit-entry.js";
import { auditArgsText } from "../session/audit-text.js";

const MAX_SHOWN = 160;

/** One entry as a line: time, actor, tool, what it was asked, how it ended, time taken, output. */
export function formatAuditEntry(entry: AuditEntry): string {
  const time = entry.ts.replace("T", " ").replace(/\.\d+Z$/, "Z");
  const parts = [
    time,
    entry.actor.padEnd(7),
    entry.tool.padEnd(14),
    clip(auditArgsText(entry.tool, entry.args)),
    "→",
    outcomeText(entry.outcome),
  ];
  const extras = [
    entry.duration_ms === null || entry.duration_ms === undefined ? "" : formatDuration(entry.duration_ms),
    entry.output_bytes === null || entry.output_bytes === undefined ? "" : formatBytes(entry.output_bytes),
  ].filter(Boolean);
  return `${parts.join(" ")}${extras.length ? `  (${extras.join(", ")})` : ""}`;
}

function clip(text: string): string {
  const oneLine = text.replace(/\r?\n/g, " ⏎ ");
  return oneLine.length > MAX_SHOWN ? `${oneLine.slice(0, MAX_SHOWN - 1)}…` : oneLine;
}

function outcomeText(outcome: AuditOutcome): string {
  const o = outcome ?? { ok: false };
  if (o.running) return "running…";
  if (typeof o.error === "string") {
    return o.refused ? `refused: ${clip(o.error)}` : `error: ${clip(o.error.split("\n")[0] ?? "")}`;
  }
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
  if (typeof o.commit === "string") bits.push(o.commit.slice(0, 12));
  if (bits.length === 0) bits.push(o.ok ? "ok" : "not ok");
  return bits.join(", ");
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
