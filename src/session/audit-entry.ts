/**
 * One line of a session's audit log, and how a tool call, a model request through the gateway or
 * a person's command becomes one. Pure: audit-log.ts writes and reads the lines, the server's tool
 * wrapper and the CLI build them here. File contents are never logged, only their sizes.
 */

/** Who did it: the MCP client's agent, a person at `drydock sessions shell`/`apply`, or drydock itself. */
export type AuditActor = "agent" | "person" | "drydock";

export interface AuditOutcome {
  /** The call did what it was asked: no error, exit code 0 where there is one, success not false. */
  ok: boolean;
  /** A command's exit code; null when it was stopped (timed out, cancelled). */
  exit_code?: number | null;
  /** The error the call answered with (redacted, capped). */
  error?: string;
  /** The last 4 KiB of what the call printed (a command's output, aider's reply), redacted, as plain text. */
  output_tail?: string;
  /** What else the call said that a reader wants: tokens, cost, branch, files, refusal… */
  [detail: string]: unknown;
}

export interface AuditEntry {
  ts: string;
  session: string;
  actor: AuditActor;
  /** The MCP tool, or `llm_request`, `person_shell`, `person_command`, `session_start`, … */
  tool: string;
  /** A summary of the arguments: command text capped, file contents as their sizes. */
  args: Record<string, unknown>;
  outcome: AuditOutcome;
  duration_ms: number | null;
  /** Bytes of output: a command's stdout and stderr, else the reply's JSON; null when unknown. */
  output_bytes: number | null;
  /** The MCP client that made the call, for agent entries. */
  client?: string;
}

/** The longest command text kept; longer ones keep their head and say how long they were. */
export const MAX_COMMAND_CHARS = 4000;
const MAX_TEXT_CHARS = 300;
const MAX_ERROR_CHARS = 1000;
const MAX_LIST_ITEMS = 50;
/** The most of a call's output kept in its outcome (`output_tail`): its last bytes. */
export const MAX_OUTPUT_TAIL_BYTES = 4096;

/** Arguments that carry file contents or values: logged as their length only. */
const CONTENT_ARGS = new Set([
  "content",
  "file_text",
  "old_str",
  "new_str",
  "old_string",
  "new_string",
  "value",
  "thought",
]);

/** Arguments that are credentials: never logged, not even their length. */
const SECRET_ARGS = new Set(["session_secret"]);

/** Arguments whose text is what the call is about: kept longer than other strings. */
const COMMAND_ARGS = new Set(["command", "ai_coding_prompt"]);

/** Reply fields worth keeping in the outcome, when a reply has them. */
const OUTCOME_FIELDS = [
  "exit_code",
  "timed_out",
  "restarted",
  "truncated",
  "success",
  "model",
  "tokens",
  "cost_usd",
  "llm_requests",
  "reverted_files",
  "mode",
  "branch",
  "commit",
  "job_id",
  "status",
  "destroyed",
  "kind",
] as const;

/** Text cut to `max` characters, saying how long it was. */
export function capText(text: string, max: number): string {
  if (text.length <= max) return text;
  return `${text.slice(0, max)}… [${text.length} chars]`;
}

/** The logged form of a tool's arguments. */
export function summarizeArgs(tool: string, args: unknown): Record<string, unknown> {
  if (args === null || typeof args !== "object" || Array.isArray(args)) return {};
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(args as Record<string, unknown>)) {
    if (value === undefined) continue;
    if (SECRET_ARGS.has(key)) {
      out[key] = "(not logged)";
    } else if (CONTENT_ARGS.has(key) && tool !== "bash") {
      out[key] = typeof value === "string" ? { chars: value.length } : { json_chars: jsonLength(value) };
    } else {
      out[key] = summarizeValue(value, COMMAND_ARGS.has(key) ? MAX_COMMAND_CHARS : MAX_TEXT_CHARS);
    }
  }
  return out;
}

function summarizeValue(value: unknown, maxChars: number, depth = 0): unknown {
  if (typeof value === "string") return capText(value, maxChars);
  if (typeof value === "number" || typeof value === "boolean" || value === null) return value;
  // Lists inside lists are shown as JSON text: a client's arguments may nest arbitrarily deep.
  if (Array.isArray(value) && depth === 0) {
    const items = value.slice(0, MAX_LIST_ITEMS).map((v) => summarizeValue(v, MAX_TEXT_CHARS, depth + 1));
    return value.length > MAX_LIST_ITEMS ? [...items, `… ${value.length - MAX_LIST_ITEMS} more`] : items;
  }
  return capText(safeJson(value), MAX_TEXT_CHARS);
}

/** JSON text of a value, or a note when it cannot be written (nested too deep for the stack). */
function safeJson(value: unknown): string {
  try {
    return JSON.stringify(value) ?? "";
  } catch {
    return "(not shown: nested too deep)";
  }
}

function jsonLength(value: unknown): number {
  return safeJson(value).length;
}

/**
 * The outcome of a call that answered `reply` (the tool's JSON). `redact` is applied to the whole
 * output before its tail is cut, so a secret across the cut is still recognised.
 */
export function successOutcome(reply: unknown, redact: (text: string) => string = (t) => t): AuditOutcome {
  const outcome: AuditOutcome = { ok: true };
  if (reply === null || typeof reply !== "object") return outcome;
  const r = reply as Record<string, unknown>;
  for (const field of OUTCOME_FIELDS) {
    const value = r[field];
    if (value === undefined) continue;
    (outcome as Record<string, unknown>)[field] =
      field === "reverted_files" ? summarizeValue(value, MAX_TEXT_CHARS) : value;
  }
  if (Array.isArray(r.files)) outcome.files = r.files.length;
  const printed = replyOutput(r);
  if (printed) outcome.output_tail = outputTail(redact(printed));
  if (typeof r.exit_code === "number" && r.exit_code !== 0) outcome.ok = false;
  if ("exit_code" in r && r.exit_code === null) outcome.ok = false;
  if (r.success === false) outcome.ok = false;
  return outcome;
}

/**
 * What a call printed, when its reply says: a command's output (stdout and stderr merged), aider's
 * own words about what it did.
 */
function replyOutput(r: Record<string, unknown>): string | undefined {
  if (typeof r.output === "string") return r.output;
  if (typeof r.success === "boolean" && typeof r.message === "string") return r.message;
  return undefined;
}

/** ANSI escape sequences: colours, cursor moves, titles (OSC, ended by BEL or ST). */
const ANSI = /\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[@-Z\\-_]/g;
/** Control characters other than tab and newline (a carriage return included). */
const CONTROL = /[\x00-\x08\x0b-\x1f\x7f]/g;

/**
 * The last `maxBytes` of a call's output (whole characters), as plain text: ANSI sequences removed
 * and every other control character shown as its Unicode picture (␛, ␍), so no reader's terminal
 * or page acts on it.
 */
export function outputTail(text: string, maxBytes = MAX_OUTPUT_TAIL_BYTES): string {
  const plain = text
    .replace(ANSI, "")
    .replace(/\r\n/g, "\n")
    .replace(CONTROL, (c) => String.fromCharCode(c === "\x7f" ? 0x2421 : 0x2400 + c.charCodeAt(0)));
  const bytes = Buffer.from(plain, "utf8");
  if (bytes.length <= maxBytes) return plain;
  let start = bytes.length - maxBytes;
  // Start on a character's first byte, not inside one.
  while (start < bytes.length && (bytes[start]! & 0xc0) === 0x80) start++;
  return bytes.subarray(start).toString("utf8");
}

export function errorOutcome(message: string): AuditOutcome {
  return { ok: false, error: capText(message, MAX_ERROR_CHARS) };
}

/** Bytes of output a reply carried: a command's stdout and stderr, else the whole reply's JSON. */
export function outputBytes(reply: unknown): number {
  if (reply !== null && typeof reply === "object") {
    const r = reply as Record<string, unknown>;
    if (typeof r.stdout === "string" && typeof r.stderr === "string") {
      return Buffer.byteLength(r.stdout) + Buffer.byteLength(r.stderr);
    }
  }
  return Buffer.byteLength(JSON.stringify(reply) ?? "");
}

/** What the gateway reports for one model request (see gateway/exchange-handler.ts ExchangeEvent). */
export interface GatewayRequestFacts {
  provider: string;
  path: string;
  model?: string;
  status: number;
  source: string;
  inputTokens: number;
  outputTokens: number;
  costUsd: number;
  usageEstimated: boolean;
  durationMs: number;
  refusal?: { code: string; message: string };
}

/** A model request through the session's gateway, made from inside the box. */
export function gatewayEntry(session: string, event: GatewayRequestFacts, now = new Date()): AuditEntry {
  const outcome: AuditOutcome = {
    ok: event.refusal === undefined && event.status < 400,
    status: event.status,
    source: event.source,
    tokens: { input: event.inputTokens, output: event.outputTokens },
    cost_usd: event.costUsd,
    refused: event.refusal !== undefined,
  };
  if (event.usageEstimated) outcome.usage_estimated = true;
  if (event.refusal)
    outcome.error = capText(`${event.refusal.code}: ${event.refusal.message}`, MAX_ERROR_CHARS);
  return {
    ts: now.toISOString(),
    session,
    actor: "agent",
    tool: "llm_request",
    args: { provider: event.provider, model: event.model ?? null, path: capText(event.path, MAX_TEXT_CHARS) },
    outcome,
    duration_ms: Math.round(event.durationMs),
    output_bytes: null,
  };
}

/** Parses one line of a log; undefined for a line that is not an entry (a torn last line). */
export function parseAuditLine(line: string): AuditEntry | undefined {
  if (line.trim() === "") return undefined;
  try {
    const value = JSON.parse(line) as Partial<AuditEntry>;
    if (typeof value.ts !== "string" || typeof value.tool !== "string" || typeof value.actor !== "string") {
      return undefined;
    }
    return value as AuditEntry;
  } catch {
    return undefined;
  }
}

/** Something drydock did to a session: started it, removed it, kept it at shutdown, adopted it after a restart. */
export function drydockEntry(
  session: string,
  tool:
    | "session_start"
    | "session_end"
    | "session_kept"
    | "session_adopted"
    | "session_checkpoint"
    | "session_restore",
  args: Record<string, unknown> = {},
  now = new Date(),
): AuditEntry {
  return {
    ts: now.toISOString(),
    session,
    actor: "drydock",
    tool,
    args,
    outcome: { ok: true },
    duration_ms: null,
    output_bytes: null,
  };
}
