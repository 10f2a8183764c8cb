import { createHash } from "node:crypto";
import { fileURLToPath } from "node:url";
import { chatText, isRecord, requestedModel } from "./chat-request.js";
import { chooseRule, loadOfflineScript, noRuleReply, type OfflineScript } from "./offline-script.js";
import { sseEvent } from "./sse.js";
import { estimatePromptTokens, estimateTokens } from "./token-estimate.js";

/** The model name the offline model goes by (aider and litellm call it `openai/drydock-offline`). */
export const OFFLINE_MODEL = "drydock-offline";

/** The script used when none is given: edits examples/sample-repo (see docs/aider.md, The offline model). */
export const DEFAULT_SCRIPT_PATH = fileURLToPath(
  new URL("../../src/gateway/offline/default-script.json", import.meta.url),
);

/** A request as the offline model sees it: the path after any provider prefix, and the raw body. */
export interface OfflineRequest {
  method: string;
  path: string;
  body: string;
}

/** A complete answer; a streamed one is a list of SSE events. */
export interface OfflineAnswer {
  status: number;
  contentType: string;
  chunks: string[];
}

/**
 * An OpenAI-compatible chat-completions model that answers from a script (see offline-script.ts):
 * `POST /v1/chat/completions`, streaming or not, and `GET /v1/models`. A request no rule matches
 * gets a normal 200 answer whose text names the script, so a client such as aider shows it. Token
 * usage is estimated at about four characters a token.
 */
export class OfflineModel {
  constructor(readonly script: OfflineScript) {}

  static fromFile(path: string = DEFAULT_SCRIPT_PATH): OfflineModel {
    return new OfflineModel(loadOfflineScript(path));
  }

  answer(request: OfflineRequest): OfflineAnswer {
    const path = request.path.replace(/\?.*$/, "").replace(/\/+$/, "");
    if (path.endsWith("/models") && request.method === "GET") return this.models();
    if (path.endsWith("/chat/completions")) {
      if (request.method !== "POST") return openAiError(405, `use POST for ${path}`);
      return this.complete(request.body);
    }
    return openAiError(
      404,
      `the offline model serves POST /v1/chat/completions and GET /v1/models, not ${request.method} ${path || "/"}`,
    );
  }

  private models(): OfflineAnswer {
    const ids = new Set([
      OFFLINE_MODEL,
      ...this.script.rules.flatMap((rule) => (rule.model ? [rule.model] : [])),
    ]);
    const data = [...ids].map((id) => ({ id, object: "model", created: 0, owned_by: "drydock" }));
    return json(200, { object: "list", data });
  }

  private complete(rawBody: string): OfflineAnswer {
    let body: unknown;
    try {
      body = JSON.parse(rawBody);
    } catch {
      return openAiError(400, "the request body is not JSON");
    }
    if (!isRecord(body) || !Array.isArray(body.messages) || body.messages.length === 0) {
      return openAiError(400, "the request needs a non-empty `messages` list");
    }
    const model = requestedModel(body) ?? OFFLINE_MODEL;
    const text = chatText(body);
    const rule = chooseRule(this.script, {
      model,
      lastUserText: text.lastUser,
      wholeText: text.messages.join("\n\n"),
    });
    const reply = rule ? rule.reply : noRuleReply(this.script);
    const promptTokens = estimatePromptTokens(text.messages);
    const completionTokens = estimateTokens(reply);
    const usage = {
      prompt_tokens: promptTokens,
      completion_tokens: completionTokens,
      total_tokens: promptTokens + completionTokens,
    };
    const id = "chatcmpl-offline-" + createHash("sha256").update(rawBody).digest("hex").slice(0, 24);
    const created = Math.floor(Date.now() / 1000);
    if (body.stream !== true) {
      return json(200, {
        id,
        object: "chat.completion",
        created,
        model,
        choices: [
          {
            index: 0,
            message: { role: "assistant", content: reply, refusal: null },
            logprobs: null,
            finish_reason: "stop",
          },
        ],
        usage,
        system_fingerprint: null,
      });
    }
    const includeUsage = isRecord(body.stream_options) && body.stream_options.include_usage === true;
    const chunk = (choices: unknown[], extra: Record<string, unknown> = {}) =>
      sseEvent({
        id,
        object: "chat.completion.chunk",
        created,
        model,
        system_fingerprint: null,
        choices,
        ...extra,
      });
    const delta = (content: Record<string, unknown>, finish: string | null = null) => ({
      index: 0,
      delta: content,
      logprobs: null,
      finish_reason: finish,
    });
    const chunks = [chunk([delta({ role: "assistant", content: "" })])];
    // One line per chunk, as a model streaming token by token would deliver it, only coarser.
    for (const line of reply.match(/[^\n]*\n|[^\n]+$/g) ?? []) chunks.push(chunk([delta({ content: line })]));
    chunks.push(chunk([delta({}, "stop")]));
    if (includeUsage) chunks.push(chunk([], { usage }));
    chunks.push(sseEvent("[DONE]"));
    return { status: 200, contentType: "text/event-stream; charset=utf-8", chunks };
  }
}

function json(status: number, value: unknown): OfflineAnswer {
  return { status, contentType: "application/json", chunks: [JSON.stringify(value)] };
}

function openAiError(status: number, message: string): OfflineAnswer {
  return json(status, {
    error: { message: `drydock offline model: ${message}`, type: "invalid_request_error", code: null },
  });
}
