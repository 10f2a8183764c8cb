import {
  createServer,
  type IncomingMessage,
  type OutgoingHttpHeaders,
  type Server,
  type ServerResponse,
} from "node:http";
import type { AddressInfo } from "node:net";
import { unlink } from "node:fs/promises";
import { StringDecoder } from "node:string_decoder";
import { LimitExceededError } from "../util/errors.js";
import { addLogRedactor, logger } from "../util/log.js";
import { callRefusal } from "./call-policy.js";
import { chatText, isRecord, requestedModel } from "./chat-request.js";
import { errorBody, refusalStatus, type RefusalCode } from "./gateway-errors.js";
import { openAnswer, type Answer } from "./answer-source.js";
import { readBody, writeChunk } from "./http-body.js";
import type { LlmMode } from "./llm-mode.js";
import { OfflineModel } from "./offline-model.js";
import { DEFAULT_PRICES, type PriceTable } from "./prices.js";
import { loadProviderKeys, secretValues, type ProviderKeys } from "./provider-keys.js";
import { DEFAULT_ALLOWED_HOSTS, isProvider, splitProviderPath, type UpstreamProvider } from "./providers.js";
import { ExchangeRecorder, exchangeKey, normalizePath, ReplayBook } from "./record-replay.js";
import { secretRedactor, StreamRedactor } from "./redact.js";
import { planRoute, type RouteContext } from "./route-plan.js";
import { BOX_GID, BOX_UID, grantBoxAccess, prepareSocketPath } from "./socket-dir.js";
import { estimatePromptTokens } from "./token-estimate.js";
import { UsageLedger, type LlmLimits, type UsageTotals } from "./usage-ledger.js";
import { UsageMeter } from "./usage-meter.js";

const log = logger("gateway");

export interface LlmGatewayOptions {
  /** Unix socket to listen on (for a session: under the directory bind-mounted at /run/drydock). */
  socketPath?: string;
  /** Or a TCP address instead of a socket, for host-side use; default host 127.0.0.1, port 0 (any free). */
  tcp?: { host?: string; port?: number };
  /** Default `live`. */
  mode?: LlmMode;
  /** Real provider keys; default `loadProviderKeys()` (the host environment). */
  keys?: ProviderKeys;
  /** Base URLs replacing the providers' defaults, e.g. a loopback fake in tests. Their hosts must be allowed. */
  upstreams?: Partial<Record<UpstreamProvider, string>>;
  /** Hosts (`host` or `host:port`) the gateway may forward to; default the three providers' API hosts. */
  allowedHosts?: readonly string[];
  limits?: LlmLimits;
  /** Prices merged over DEFAULT_PRICES. */
  prices?: PriceTable;
  /** The model behind `/offline`; default the default script. */
  offlineModel?: OfflineModel;
  /** Owner given to the socket's directory when running as root; default 1000:1000 (the box user). */
  boxUid?: number;
  boxGid?: number;
  /** Names the gateway in logs, e.g. the session id. */
  label?: string;
}

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

/**
 * A session's door to the model providers: an HTTP endpoint on a unix socket that routes
 * `/openai/…`, `/anthropic/…`, `/gemini/…` and `/offline/…`, puts the host's real key on each
 * call, forwards only to allowed hosts, streams answers through, counts usage against the
 * session's limits, and records or replays exchanges. Start with `LlmGateway.start`.
 */
export class LlmGateway implements AsyncDisposable {
  private readonly ledger: UsageLedger;
  private readonly listeners = new Set<(event: ExchangeEvent) => void>();
  private readonly recorder: ExchangeRecorder | undefined;
  private readonly replay: ReplayBook | undefined;
  private readonly offline: OfflineModel;
  private readonly keys: ProviderKeys;
  private readonly routes: RouteContext;
  private readonly server: Server;
  private removeRedactor: () => void = () => undefined;
  private address_ = "";

  private constructor(private readonly options: LlmGatewayOptions & { mode: LlmMode }) {
    this.keys = options.keys ?? loadProviderKeys();
    this.ledger = new UsageLedger(options.limits, { ...DEFAULT_PRICES, ...options.prices });
    this.offline = options.offlineModel ?? OfflineModel.fromFile();
    const mode = options.mode;
    this.recorder = mode.kind === "record" ? new ExchangeRecorder(mode.file) : undefined;
    this.replay = mode.kind === "replay" ? ReplayBook.load(mode.file) : undefined;
    this.routes = {
      mode,
      keys: this.keys,
      ...(options.upstreams ? { upstreams: options.upstreams } : {}),
      allowedHosts: new Set(
        (options.allowedHosts ?? DEFAULT_ALLOWED_HOSTS).map((host) => host.toLowerCase()),
      ),
      hasRecording: (key) => this.replay?.has(key) ?? false,
    };
    this.server = createServer((request, response) => {
      this.handle(request, response).catch((error: Error) => {
        log.error(`${this.name} ${request.method} ${request.url} failed: ${error.stack ?? error.message}`);
        if (!response.headersSent) response.writeHead(500, { "content-type": "application/json" });
        response.end(
          JSON.stringify({ error: { message: `drydock gateway: internal error: ${error.message}` } }),
        );
      });
    });
  }

  /** Starts listening; the socket is made connectable by the box user (see socket-dir.ts). */
  static async start(options: LlmGatewayOptions): Promise<LlmGateway> {
    if ((options.socketPath === undefined) === (options.tcp === undefined)) {
      throw new Error("LlmGateway needs exactly one of socketPath or tcp");
    }
    const gateway = new LlmGateway({ ...options, mode: options.mode ?? { kind: "live" } });
    await gateway.listen();
    return gateway;
  }

  /** The socket path, or `http://host:port` when listening on TCP. */
  get address(): string {
    return this.address_;
  }

  usage(): UsageTotals {
    return this.ledger.totals();
  }

  /** Calls `listener` after every call (refusals included); returns a function that stops it. */
  onExchange(listener: (event: ExchangeEvent) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
    await this.recorder?.flush();
    if (this.options.socketPath) await unlink(this.options.socketPath).catch(() => undefined);
    this.removeRedactor();
    log.debug(`${this.name} closed`);
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }

  private get secrets(): string[] {
    return secretValues(this.keys);
  }

  private get name(): string {
    return `gateway${this.options.label ? ` ${this.options.label}` : ""}`;
  }

  private async listen(): Promise<void> {
    const { socketPath, tcp } = this.options;
    if (socketPath) await prepareSocketPath(socketPath);
    await new Promise<void>((resolve, reject) => {
      this.server.once("error", reject);
      const done = () => {
        this.server.off("error", reject);
        resolve();
      };
      if (socketPath) this.server.listen(socketPath, done);
      else this.server.listen(tcp?.port ?? 0, tcp?.host ?? "127.0.0.1", done);
    });
    if (socketPath) {
      await grantBoxAccess(socketPath, this.options.boxUid ?? BOX_UID, this.options.boxGid ?? BOX_GID);
      this.address_ = socketPath;
    } else {
      const { address, port } = this.server.address() as AddressInfo;
      this.address_ = `http://${address.includes(":") ? `[${address}]` : address}:${port}`;
    }
    this.removeRedactor = addLogRedactor(secretRedactor(this.secrets));
    const keyNames = Object.values(this.keys).map((key) => key.envName);
    log.info(
      `${this.name} listening on ${this.address_} (mode ${this.options.mode.kind}, keys: ${keyNames.join(", ") || "none"})`,
    );
  }

  private async handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const started = performance.now();
    const method = (request.method ?? "GET").toUpperCase();
    const { provider, rest: path } = splitProviderPath(request.url ?? "/");
    const base = { provider, method, path: normalizePath(path) };
    const refuse = (code: RefusalCode, message: string, model?: string) => {
      this.ledger.refuse();
      log.warn(`${this.name} refused ${method} /${provider}${base.path}: ${message}`);
      if (!response.headersSent) {
        response.writeHead(refusalStatus(code), {
          "content-type": "application/json",
          "x-drydock-source": "gateway",
        });
      }
      response.end(errorBody(provider, code, message));
      this.emit({
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
      return refuse(
        "unknown_route",
        `no route for /${provider}; use /openai, /anthropic, /gemini or /offline`,
      );
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
    const plan = planRoute(this.routes, { provider, method, path, body: text });
    if (plan.kind === "refuse") return refuse(plan.code, plan.message, model);
    try {
      this.ledger.admit();
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
        { method, path, headers: request.headers, body: text, signal: abort.signal },
        { offline: this.offline, replay: this.replay },
      );
    } catch (error) {
      this.ledger.cancel();
      return refuse(
        "upstream_unreachable",
        `could not reach ${provider}: ${(error as Error).message}`,
        model,
      );
    }

    const contentType = String(answer.headers["content-type"] ?? "");
    const streamed = contentType.includes("text/event-stream");
    const meter = new UsageMeter(contentType);
    const recorded: string[] = [];
    // An upstream may echo what it was sent (an error quoting the key): the box must not see it.
    const scrub = this.secrets.length > 0 ? new StreamRedactor(this.secrets) : undefined;
    const decoder = new StringDecoder("utf8");
    response.writeHead(answer.status, {
      ...(scrub ? redactHeaders(answer.headers, secretRedactor(this.secrets)) : answer.headers),
      "x-drydock-source": answer.source,
    });
    try {
      for await (const chunk of answer.body) {
        const piece = typeof chunk === "string" ? chunk : chunk.toString("utf8");
        meter.push(piece);
        if (this.recorder) recorded.push(piece);
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
        `${this.name} ${method} /${provider}${base.path}: stream ended early: ${(error as Error).message}`,
      );
      response.destroy();
    }

    const usage = meter.finish();
    // A successful answer without usage still cost its prompt; a failed one is taken at its word.
    const usageEstimated = usage.inputTokens === undefined && answer.status < 300;
    const tokens = {
      inputTokens:
        usage.inputTokens ?? (usageEstimated ? estimatePromptTokens(chatText(parsed).messages) : 0),
      outputTokens: usage.outputTokens ?? 0,
    };
    const usedModel = model ?? usage.model ?? "unknown";
    const { costUsd } = this.ledger.settle(usedModel, tokens);
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
      `${this.name} ${method} /${provider}${base.path} ${answer.status} via ${answer.source}: ${tokens.inputTokens} in, ${tokens.outputTokens} out, $${costUsd.toFixed(6)}`,
    );
    // Transient failures (rate limits, provider errors) are not part of a run worth replaying.
    if (this.recorder && answer.source !== "replay" && answer.status < 500 && answer.status !== 429) {
      await this.recorder
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
          log.error(`${this.name} could not record to ${this.recorder?.file}: ${error.message}`),
        );
    }
    this.emit(event);
  }

  private emit(event: ExchangeEvent): void {
    for (const listener of this.listeners) {
      try {
        listener(event);
      } catch (error) {
        log.warn(`${this.name} exchange listener failed: ${(error as Error).message}`);
      }
    }
  }
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
