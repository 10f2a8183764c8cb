import {
  createServer,
  type IncomingMessage,
  type OutgoingHttpHeaders,
  type Server,
  type ServerResponse,
} from "node:http";
import type { AddressInfo } from "node:net";
import { unlink } from "node:fs/promises";
import { LimitExceededError } from "../util/errors.js";
import { addLogRedactor, logger } from "../util/log.js";
import { chatText, isRecord, requestedModel } from "./chat-request.js";
import { errorBody, refusalStatus, type RefusalCode } from "./gateway-errors.js";
import { readBody } from "./http-body.js";
import type { LlmMode } from "./llm-mode.js";
import { OfflineModel } from "./offline-model.js";
import { DEFAULT_PRICES, type PriceTable } from "./prices.js";
import { loadProviderKeys, secretValues, type ProviderKeys } from "./provider-keys.js";
import {
  authHeader,
  DEFAULT_ALLOWED_HOSTS,
  DEFAULT_UPSTREAMS,
  isProvider,
  splitProviderPath,
  type Provider,
  type UpstreamProvider,
} from "./providers.js";
import { ExchangeRecorder, exchangeKey, normalizePath, ReplayBook, requestSummary } from "./record-replay.js";
import { secretRedactor } from "./redact.js";
import { BOX_GID, BOX_UID, grantBoxAccess, prepareSocketPath } from "./socket-dir.js";
import { estimatePromptTokens } from "./token-estimate.js";
import { clientResponseHeaders, sendUpstream, upstreamRequestHeaders } from "./upstream.js";
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

type Plan =
  | { kind: "refuse"; code: RefusalCode; message: string }
  | { kind: "offline" }
  | { kind: "replay"; key: string }
  | { kind: "upstream"; url: URL; auth: [string, string] };

interface Answer {
  status: number;
  headers: OutgoingHttpHeaders;
  body: AsyncIterable<Buffer | string> | Iterable<string>;
  source: ExchangeEvent["source"];
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
  private readonly allowedHosts: Set<string>;
  private readonly server: Server;
  private removeRedactor: () => void = () => undefined;
  private address_ = "";

  private constructor(private readonly options: LlmGatewayOptions & { mode: LlmMode }) {
    this.keys = options.keys ?? loadProviderKeys();
    this.ledger = new UsageLedger(options.limits, { ...DEFAULT_PRICES, ...options.prices });
    this.offline = options.offlineModel ?? OfflineModel.fromFile();
    this.allowedHosts = new Set(
      (options.allowedHosts ?? DEFAULT_ALLOWED_HOSTS).map((host) => host.toLowerCase()),
    );
    const mode = options.mode;
    this.recorder = mode.kind === "record" ? new ExchangeRecorder(mode.file) : undefined;
    this.replay = mode.kind === "replay" ? ReplayBook.load(mode.file) : undefined;
    this.server = createServer((request, response) => void this.handle(request, response));
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
    this.removeRedactor = addLogRedactor(secretRedactor(secretValues(this.keys)));
    const keyNames = Object.values(this.keys).map((key) => key.envName);
    log.info(
      `${this.name} listening on ${this.address_} (mode ${this.options.mode.kind}, keys: ${keyNames.join(", ") || "none"})`,
    );
  }

  /** Decides who answers a call, or why nobody will. */
  private plan(provider: Provider, method: string, path: string, body: string): Plan {
    const mode = this.options.mode;
    if (mode.kind === "replay") {
      const key = exchangeKey(provider, method, path, body);
      if (this.replay?.has(key)) return { kind: "replay", key };
      return {
        kind: "refuse",
        code: "replay_miss",
        message: `no recorded answer in ${mode.file} for this request (${requestSummary(provider, method, path, body)}); record it with --llm record:${mode.file}`,
      };
    }
    if (provider === "offline") return { kind: "offline" };
    if (mode.kind === "offline") {
      if (provider === "openai") return { kind: "offline" };
      return {
        kind: "refuse",
        code: "offline_only",
        message: `drydock runs with --llm offline, so ${provider} is not called; only the offline model answers (model openai/drydock-offline)`,
      };
    }
    const key = this.keys[provider];
    if (!key) {
      return {
        kind: "refuse",
        code: "no_key",
        message: `the host has no ${provider} key (${provider === "gemini" ? "GEMINI_API_KEY or GOOGLE_API_KEY" : `${provider.toUpperCase()}_API_KEY`}): set it in drydock's environment or .env file, or use the offline model (model openai/drydock-offline)`,
      };
    }
    const base = (this.options.upstreams?.[provider] ?? DEFAULT_UPSTREAMS[provider]).replace(/\/+$/, "");
    let url: URL;
    try {
      url = new URL(base + normalizePath(path));
    } catch {
      return {
        kind: "refuse",
        code: "upstream_not_allowed",
        message: `upstream ${base} for ${provider} is not a URL`,
      };
    }
    const loopback = ["127.0.0.1", "localhost", "[::1]"].includes(url.hostname);
    if (
      !this.allowedHosts.has(url.host.toLowerCase()) &&
      !this.allowedHosts.has(url.hostname.toLowerCase())
    ) {
      return {
        kind: "refuse",
        code: "upstream_not_allowed",
        message: `upstream ${url.host} is not on the allowlist (${[...this.allowedHosts].join(", ")}); the request was not sent`,
      };
    }
    if (url.protocol !== "https:" && !loopback) {
      return {
        kind: "refuse",
        code: "upstream_not_allowed",
        message: `upstream ${url.origin} is not https; keys are only sent over TLS (or to loopback)`,
      };
    }
    return { kind: "upstream", url, auth: authHeader(provider, key.value) };
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

    const plan = this.plan(provider, method, path, text);
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
      answer = await this.open(plan, provider, method, path, request, text, abort.signal);
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
    response.writeHead(answer.status, { ...answer.headers, "x-drydock-source": answer.source });
    try {
      for await (const chunk of answer.body) {
        const piece = typeof chunk === "string" ? chunk : chunk.toString("utf8");
        meter.push(piece);
        if (this.recorder) recorded.push(piece);
        await write(response, chunk);
      }
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

  private async open(
    plan: Exclude<Plan, { kind: "refuse" }>,
    provider: Provider,
    method: string,
    path: string,
    request: IncomingMessage,
    body: string,
    signal: AbortSignal,
  ): Promise<Answer> {
    if (plan.kind === "offline") {
      const answer = this.offline.answer({ method, path, body });
      return {
        status: answer.status,
        headers: { "content-type": answer.contentType, "cache-control": "no-cache" },
        body: answer.chunks,
        source: "offline",
      };
    }
    if (plan.kind === "replay") {
      const exchange = this.replay?.take(plan.key);
      if (!exchange) throw new Error(`replay answer for ${provider} vanished`);
      return {
        status: exchange.status,
        headers: { "content-type": exchange.contentType, "cache-control": "no-cache" },
        body: [exchange.body],
        source: "replay",
      };
    }
    const bytes = Buffer.from(body, "utf8");
    const headers = upstreamRequestHeaders(request.headers, plan.auth, bytes.length);
    const upstream = await sendUpstream(plan.url, method, headers, bytes, signal);
    return {
      status: upstream.statusCode ?? 502,
      headers: clientResponseHeaders(upstream.headers),
      body: upstream,
      source: "upstream",
    };
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

/** Writes a chunk, waiting while the client is slow, and not at all once it has gone. */
function write(response: ServerResponse, chunk: Buffer | string): Promise<void> {
  if (response.destroyed) return Promise.reject(new Error("client went away"));
  if (response.write(chunk)) return Promise.resolve();
  return new Promise((resolve, reject) => {
    const onDrain = () => {
      response.off("close", onClose);
      resolve();
    };
    const onClose = () => {
      response.off("drain", onDrain);
      reject(new Error("client went away"));
    };
    response.once("drain", onDrain);
    response.once("close", onClose);
  });
}
