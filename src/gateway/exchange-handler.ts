import type { IncomingMessage, OutgoingHttpHeaders, ServerResponse } from "node:http";
import { StringDecoder } from "node:string_decoder";
import { LimitExceededError } from "../util/errors.js";
import { logger } from "../util/log.js";
import { callRefusal } from "./call-policy.js";
import { chatText, isRecord, requestedModel } from "./chat-request.js";
import { errorBody, refusalStatus, type RefusalCode } from "./gateway-errors.js";
import { openAnswer, type Answer } from "./answer-source.js";
import { readBody, writeChunk } from "./http-body.js";
import type { OfflineModel } from "./offline-model.js";
import { isProvider, splitProviderPath } from "./providers.js";
import { exchangeKey, normalizePath, type ExchangeRecorder, type ReplayBook } from "./record-replay.js";
import { secretRedactor, StreamRedactor } from "./redact.js";
import { planRoute, type RouteContext } from "./route-plan.js";
import { estimatePromptTokens } from "./token-estimate.js";
import type { UsageLedger } from "./usage-ledger.js";
import { UsageMeter } from "./usage-meter.js";

const log = logger("gateway");

/** What one call through the gateway did, reported to `onExchange` listeners. */
export interface ExchangeEvent {
  provider: string;
  method: string;
  path: string;
  model?: string;
  status: number;
  /** Who answered: a provider, the offline model, the record file, or the gateway itself (a refusal). */
  source: "upstream" | "offline" | "replay" | "gateway";
  streamed: boolean;
  inputTokens: number;
  outputTokens: number;
  costUsd: number;
  /** True when the response carried no usage and tokens were estimated from the request. */
  usageEstimated: boolean;
  durationMs: number;
  refusal?: { code: RefusalCode; message: string };
}

/** What handling one call needs from the gateway that received it. */
export interface ExchangeContext {
  /** Names the gateway in logs. */
  readonly name: string;
  readonly ledger: UsageLedger;
  readonly routes: RouteContext;
  readonly offline: OfflineModel;
  readonly replay: ReplayBook | undefined;
  readonly recorder: ExchangeRecorder | undefined;
  /** The `anthropic-beta` values the operator allows to be forwarded; others are dropped. */
  readonly anthropicBetas: ReadonlySet<string>;
  /** The real key values, kept out of what the box sees. */
  secrets(): string[];
  /** Tells the gateway's listeners what the call did. */
  emit(event: ExchangeEvent): void;
}

/**
 * Handles one call through the gateway: refuses it, or routes it, streams the answer back with
 * secrets scrubbed, settles its usage, records it when recording, and reports it with `ctx.emit`.
 */
export async function handleExchange(
  ctx: ExchangeContext,
  request: IncomingMessage,
  response: ServerResponse,
): Promise<void> {
  const started = performance.now();
  const method = (request.method ?? "GET").toUpperCase();
  const { provider, rest: path } = splitProviderPath(request.url ?? "/");
  const base = { provider, method, path: normalizePath(path) };
  const refuse = (code: RefusalCode, message: string, model?: string) => {
    ctx.ledger.refuse();
    log.warn(`${ctx.name} refused ${method} /${provider}${base.path}: ${message}`);
    if (!response.headersSent) {
      response.writeHead(refusalStatus(code), {
        "content-type": "application/json",
        "x-drydock-source": "gateway",
      });
    }
    response.end(errorBody(provider, code, message));
    ctx.emit({
      ...base,
      ...(model ? { model } : {}),
      status: refusalStatus(code),
      source: "gateway",
      streamed: false,
      inputTokens: 0,
      outputTokens: 0,
      costUsd: 0,
      usageEstimated: false,
      durationMs: performance.now() - started,
      refusal: { code, message },
    });
  };

  if (!isProvider(provider)) {
    return refuse("unknown_route", `no route for /${provider}; use /openai, /anthropic, /gemini or /offline`);
  }
  let text: string;
  try {
    text = (await readBody(request)).toString("utf8");
  } catch (error) {
    return refuse("bad_request", (error as Error).message);
  }
  let parsed: unknown;
  try {
    parsed = text ? JSON.parse(text) : undefined;
  } catch {
    parsed = undefined;
  }
  if (provider !== "offline" && text !== "") {
    if (!isRecord(parsed)) {
      return refuse(
        "bad_request",
        "the request body is not a JSON object; a model call sends one JSON object, read as JSON.parse reads it (no NaN, Infinity, comments or compression)",
      );
    }
    // The provider gets the body that was checked, not the bytes that came in, so a parser that
    // reads repeated fields or lenient JSON otherwise cannot see a request the policy did not.
    text = JSON.stringify(parsed);
  }
  // OpenAI streams report usage only when asked; ask, so that streamed calls are counted too.
  if (
    (provider === "openai" || provider === "offline") &&
    isRecord(parsed) &&
    parsed.stream === true &&
    parsed.stream_options === undefined &&
    base.path.endsWith("/chat/completions")
  ) {
    parsed.stream_options = { include_usage: true };
    text = JSON.stringify(parsed);
  }
  const model = requestedModel(parsed) ?? /\/models\/([^/:?]+)/.exec(base.path)?.[1];

  const notAllowed = callRefusal(provider, method, path, parsed);
  if (notAllowed) return refuse("call_not_allowed", notAllowed, model);
  const plan = planRoute(ctx.routes, { provider, method, path, body: text });
  if (plan.kind === "refuse") return refuse(plan.code, plan.message, model);
  try {
    ctx.ledger.admit();
  } catch (error) {
    if (error instanceof LimitExceededError) return refuse("limit_exceeded", error.message, model);
    throw error;
  }

  const abort = new AbortController();
  response.on("close", () => {
    if (!response.writableFinished) abort.abort();
  });
  let answer: Answer;
  try {
    answer = await openAnswer(
      plan,
      {
        method,
        path,
        headers: request.headers,
        body: text,
        signal: abort.signal,
        anthropicBetas: ctx.anthropicBetas,
      },
      { offline: ctx.offline, replay: ctx.replay },
    );
  } catch (error) {
    ctx.ledger.cancel();
    return refuse("upstream_unreachable", `could not reach ${provider}: ${(error as Error).message}`, model);
  }

  const contentType = String(answer.headers["content-type"] ?? "");
  const streamed = contentType.includes("text/event-stream");
  const meter = new UsageMeter(contentType);
  const recorded: string[] = [];
  // An upstream may echo what it was sent (an error quoting the key): the box must not see it.
  const scrub = ctx.secrets().length > 0 ? new StreamRedactor(ctx.secrets()) : undefined;
  const decoder = new StringDecoder("utf8");
  response.writeHead(answer.status, {
    ...(scrub ? redactHeaders(answer.headers, secretRedactor(ctx.secrets())) : answer.headers),
    "x-drydock-source": answer.source,
  });
  try {
    for await (const chunk of answer.body) {
      const piece = typeof chunk === "string" ? chunk : chunk.toString("utf8");
      meter.push(piece);
      if (ctx.recorder) recorded.push(piece);
      if (!scrub) await writeChunk(response, chunk);
      else {
        const safe = scrub.push(typeof chunk === "string" ? chunk : decoder.write(chunk));
        if (safe) await writeChunk(response, safe);
      }
    }
    const rest = scrub ? scrub.push(decoder.end()) + scrub.flush() : "";
    if (rest) await writeChunk(response, rest);
    response.end();
  } catch (error) {
    log.warn(
      `${ctx.name} ${method} /${provider}${base.path}: stream ended early: ${(error as Error).message}`,
    );
    response.destroy();
  }

  const usage = meter.finish();
  // A successful answer without usage still cost its prompt; a failed one is taken at its word.
  const usageEstimated = usage.inputTokens === undefined && answer.status < 300;
  const tokens = {
    inputTokens: usage.inputTokens ?? (usageEstimated ? estimatePromptTokens(chatText(parsed).messages) : 0),
    outputTokens: usage.outputTokens ?? 0,
  };
  const usedModel = model ?? usage.model ?? "unknown";
  const { costUsd } = ctx.ledger.settle(usedModel, tokens);
  const event: ExchangeEvent = {
    ...base,
    model: usedModel,
    status: answer.status,
    source: answer.source,
    streamed,
    ...tokens,
    costUsd,
    usageEstimated,
    durationMs: performance.now() - started,
  };
  log.debug(
    `${ctx.name} ${method} /${provider}${base.path} ${answer.status} via ${answer.source}: ${tokens.inputTokens} in, ${tokens.outputTokens} out, $${costUsd.toFixed(6)}`,
  );
  // Transient failures (rate limits, provider errors) are not part of a run worth replaying.
  if (ctx.recorder && answer.source !== "replay" && answer.status < 500 && answer.status !== 429) {
    await ctx.recorder
      .append({
        v: 1,
        key: exchangeKey(provider, method, path, text),
        provider,
        method,
        path: base.path,
        ...(model ? { model } : {}),
        request: parsed ?? text,
        status: answer.status,
        contentType,
        streamed,
        body: recorded.join(""),
        recordedAt: new Date().toISOString(),
      })
      .catch((error: Error) =>
        log.error(`${ctx.name} could not record to ${ctx.recorder?.file}: ${error.message}`),
      );
  }
  ctx.emit(event);
}

/** Response headers with secrets in their values redacted; a length no longer holds once the body may change. */
function redactHeaders(headers: OutgoingHttpHeaders, redact: (text: string) => string): OutgoingHttpHeaders {
  const out: OutgoingHttpHeaders = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined || name.toLowerCase() === "content-length") continue;
    out[name] = Array.isArray(value) ? value.map(redact) : typeof value === "string" ? redact(value) : value;
  }
  return out;
}
