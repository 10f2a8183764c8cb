/**
 * The one shape every AiderBridge call resolves to, whatever happened on the way: the orchestrator
 * branches on `status` and never has to catch.
 */
export type TaskStatus = "COMPLETE" | "FAILED";

/**
 * Why a call FAILED, as a stable string an orchestrator can branch on (`notes.failure`).
 * - `config`: the bridge options or the call's arguments are missing or invalid.
 * - `connect`: the server could not be started or reached, or did not complete the MCP handshake.
 * - `transport`: the connection broke during the call (the server went away mid-call).
 * - `timeout`: no reply (and no progress) within `timeoutMs`.
 * - `cancelled`: the caller's AbortSignal fired.
 * - `tool_error`: the server answered with an MCP `isError` result.
 * - `error_key`: the JSON reply carried an `error` key.
 * - `success_false`: the JSON reply said `"success": false`.
 * - `invalid_reply`: the reply was not JSON, or lacked what the tool promises.
 * - `closed`: the bridge was closed before the call.
 */
export type FailureReason =
  | "config"
  | "connect"
  | "transport"
  | "timeout"
  | "cancelled"
  | "tool_error"
  | "error_key"
  | "success_false"
  | "invalid_reply"
  | "closed";

/**
 * The outcome of one tool call. `content` is the diff for `aider_ai_code`, the model list (one per
 * line) for `list_models`, the reply text for other tools, and a message saying what went wrong
 * for a FAILED result. `notes` carries the parsed JSON reply; a FAILED result also has
 * `notes.failure` (a {@link FailureReason}).
 */
export interface TaskResult {
  status: TaskStatus;
  content: string;
  notes: Record<string, unknown>;
}

/** A COMPLETE TaskResult. */
export function completeResult(content: string, notes: Record<string, unknown> = {}): TaskResult {
  return { status: "COMPLETE", content, notes };
}

/** A FAILED TaskResult; `notes.failure` names the reason so callers need not parse the message. */
export function failedResult(
  failure: FailureReason,
  message: string,
  notes: Record<string, unknown> = {},
): TaskResult {
  return { status: "FAILED", content: message, notes: { ...notes, failure } };
}
