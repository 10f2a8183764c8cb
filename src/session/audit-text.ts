/**
 * What an audit entry's call was asked and how it ended, as text a person reads: shared by
 * `drydock sessions log` and the live page. Pure.
 */
import type { AuditOutcome } from "./audit-entry.js";

function str(value: unknown): string {
  if (value === undefined || value === null) return "";
  return typeof value === "string" ? value : JSON.stringify(value);
}

/** The arguments a call was given, as text a person reads. */
export function auditArgsText(tool: string, args: Record<string, unknown> | undefined): string {
  const a = args ?? {};
  switch (tool) {
    case "bash":
    case "person_command":
      return str(a.command);
    case "file_editor":
      return `${str(a.operation)} ${str(a.path)}`;
    case "str_replace_based_edit_tool":
      return `${str(a.command)} ${str(a.path)}`;
    case "json_editor":
      return `${str(a.operation)} ${str(a.file_path)} ${str(a.json_path)}`.trim();
    case "aider_ai_code": {
      const files = Array.isArray(a.relative_editable_files) ? a.relative_editable_files.join(" ") : "";
      return `${a.model ? `[${str(a.model)}] ` : ""}${files}: ${str(a.ai_coding_prompt)}`;
    }
    case "llm_request":
      return `${str(a.provider)} ${str(a.model) || "(model not named)"}`;
    case "session_start":
      return `${str(a.repo)} on ${str(a.image)}`;
    default:
      return Object.entries(a)
        .filter(([key, value]) => key !== "session_id" && value !== undefined)
        .map(([key, value]) => `${key}=${str(value)}`)
        .join(" ");
  }
}

/** How a call ended: exit code, error, tokens and cost… `clip` shortens an error's text. */
export function auditOutcomeText(o: AuditOutcome, clip: (text: string) => string = (t) => t): string {
  if (o.running) return "running…";
  if (typeof o.error === "string") {
    return o.refused ? `refused: ${clip(o.error)}` : `error: ${clip(o.error.split("\n")[0] ?? "")}`;
  }
  const bits: string[] = [];
  if (typeof o.exit_code === "number") bits.push(`exit ${o.exit_code}`);
  else if (o.exit_code === null) bits.push(o.timed_out ? "timed out" : "stopped");
  // A person's command: its status is what the box's shell reported, and is shown as such.
  if (typeof o.box_reported_exit_code === "number")
    bits.push(`exit ${o.box_reported_exit_code} (box's word)`);
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
