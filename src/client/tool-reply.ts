import { completeResult, failedResult, type TaskResult } from "./task-result.js";

/** The parts of an MCP `tools/call` result the bridge reads. */
export interface ToolReply {
  content?: unknown;
  structuredContent?: unknown;
  isError?: unknown;
  /** The reply of servers on the oldest protocol revision, read like `structuredContent`. */
  toolResult?: unknown;
}

const maxQuotedChars = 500;

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** The text blocks of a reply, joined; undefined when there are none. */
export function replyText(reply: ToolReply): string | undefined {
  if (!Array.isArray(reply.content)) return undefined;
  const texts = reply.content
    .filter((block): block is { type: "text"; text: string } => {
      return isRecord(block) && block.type === "text" && typeof block.text === "string";
    })
    .map((block) => block.text);
  return texts.length > 0 ? texts.join("\n") : undefined;
}

function quote(text: string): string {
  const trimmed = text.trim();
  return trimmed.length > maxQuotedChars ? `${trimmed.slice(0, maxQuotedChars)}…` : trimmed;
}

function describeValue(value: unknown): string {
  if (typeof value === "string") return value;
  if (isRecord(value) && typeof value.message === "string") return value.message;
  return JSON.stringify(value);
}

/** `text` parsed as a JSON object; undefined when it is not one. */
function jsonObject(text: string): Record<string, unknown> | undefined {
  try {
    const parsed: unknown = JSON.parse(text);
    return isRecord(parsed) ? parsed : undefined;
  } catch {
    return undefined;
  }
}

type Payload = { ok: true; value: unknown } | { ok: false; result: TaskResult };

/**
 * The JSON a reply carries: `structuredContent` when present (laid over the text's JSON object, so
 * fields only the text has survive), else the text parsed as JSON.
 */
function payloadOf(toolName: string, reply: ToolReply, text: string | undefined): Payload {
  let parsed: unknown;
  let parseError: string | undefined;
  if (text !== undefined) {
    try {
      parsed = JSON.parse(text);
    } catch (error) {
      parseError = error instanceof Error ? error.message : String(error);
    }
  }
  const structured = isRecord(reply.structuredContent) ? reply.structuredContent : reply.toolResult;
  if (isRecord(structured)) {
    const base = isRecord(parsed) ? parsed : {};
    return { ok: true, value: { ...base, ...structured } };
  }
  if (text === undefined) {
    return {
      ok: false,
      result: failedResult(
        "invalid_reply",
        `${toolName} failed: the server's reply has no text content and no structuredContent to read`,
      ),
    };
  }
  if (parseError !== undefined) {
    return {
      ok: false,
      result: failedResult(
        "invalid_reply",
        `${toolName} failed: the server's reply is not valid JSON (${parseError}): ${quote(text)}`,
        { raw: text },
      ),
    };
  }
  return { ok: true, value: parsed };
}

/**
 * Turns a `tools/call` result into a TaskResult: an `isError` result, an `error` key, or
 * `"success": false` become FAILED with a message saying which; `aider_ai_code` puts the diff in
 * `content`; `list_models` puts the models in `notes.models`; any other tool keeps its JSON reply
 * in `notes`.
 */
export function mapToolReply(toolName: string, reply: ToolReply): TaskResult {
  const text = replyText(reply);
  if (reply.isError === true) {
    const detail = text ?? (isRecord(reply.structuredContent) ? JSON.stringify(reply.structuredContent) : "");
    // A server on the aider seed's contract answers errors as JSON too: {"success": false, "error": ...}.
    const json = jsonObject(detail);
    const message = json !== undefined && json.error !== undefined ? describeValue(json.error) : detail;
    return failedResult(
      "tool_error",
      `${toolName} failed: the server reported a tool error: ${quote(message) || "(no message)"}`,
      { ...json, error: message },
    );
  }

  const payload = payloadOf(toolName, reply, text);
  if (!payload.ok) return payload.result;
  const notes: Record<string, unknown> = isRecord(payload.value)
    ? { ...payload.value }
    : { value: payload.value };

  // The seed server's own reply type has `error: null` on success, so only a real value counts.
  const error = notes.error;
  if (error !== undefined && error !== null && error !== false && error !== "") {
    return failedResult(
      "error_key",
      `${toolName} failed: the server reported an error: ${describeValue(error)}`,
      notes,
    );
  }
  if (notes.success === false) {
    const detail = typeof notes.diff === "string" && notes.diff.trim() !== "" ? `: ${quote(notes.diff)}` : "";
    return failedResult(
      "success_false",
      `${toolName} failed: the server replied "success": false${detail}`,
      notes,
    );
  }

  if (toolName === "aider_ai_code") {
    if (typeof notes.diff === "string") {
      const { diff, ...rest } = notes;
      return completeResult(diff, rest);
    }
    // A background run answers with a job id and no diff yet; anything else lacks what aider promises.
    if (notes.job_id !== undefined) return completeResult(text ?? JSON.stringify(notes), notes);
    return failedResult(
      "invalid_reply",
      `${toolName} failed: the reply has neither a "diff" nor a "job_id": ${quote(text ?? JSON.stringify(notes))}`,
      notes,
    );
  }

  if (toolName === "list_models") {
    const models = notes.models;
    if (!Array.isArray(models) || !models.every((m) => typeof m === "string")) {
      return failedResult(
        "invalid_reply",
        `${toolName} failed: the reply has no "models" list of strings: ${quote(text ?? JSON.stringify(notes))}`,
        notes,
      );
    }
    return completeResult(models.join("\n"), notes);
  }

  return completeResult(text ?? JSON.stringify(payload.value), notes);
}
