import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { unlink } from "node:fs/promises";
import { addLogRedactor, logger } from "../util/log.js";
import { handleExchange, type ExchangeContext, type ExchangeEvent } from "./exchange-handler.js";
import type { LlmMode } from "./llm-mode.js";
import { OfflineModel } from "./offline-model.js";
import { DEFAULT_PRICES, type PriceTable } from "./prices.js";
import { loadProviderKeys, secretValues, type ProviderKeys } from "./provider-keys.js";
import { DEFAULT_ALLOWED_HOSTS, type UpstreamProvider } from "./providers.js";
import { ExchangeRecorder, ReplayBook } from "./record-replay.js";
import { secretRedactor } from "./redact.js";
import { ANTHROPIC_BETA_ENV, betaNames } from "./upstream.js";
import { keepSocketPrivate, prepareSocketPath } from "./socket-dir.js";
import { UsageLedger, type LlmLimits, type UsageTotals } from "./usage-ledger.js";

export type { ExchangeEvent } from "./exchange-handler.js";

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
  /** Names the gateway in logs, e.g. the session id. */
  label?: string;
  /**
   * The `anthropic-beta` values a box may ask for; every other value, and every other provider's
   * beta or account header, is dropped. Default: the comma-separated list in the host's
   * `DRYDOCK_ANTHROPIC_BETA`, else none.
   */
  anthropicBetas?: readonly string[];
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
  private readonly exchange: ExchangeContext;
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
    this.exchange = {
      name: this.name,
      ledger: this.ledger,
      routes: {
        mode,
        keys: this.keys,
        ...(options.upstreams ? { upstreams: options.upstreams } : {}),
        allowedHosts: new Set(
          (options.allowedHosts ?? DEFAULT_ALLOWED_HOSTS).map((host) => host.toLowerCase()),
        ),
        hasRecording: (key) => this.replay?.has(key) ?? false,
      },
      offline: this.offline,
      replay: this.replay,
      recorder: this.recorder,
      anthropicBetas: new Set(options.anthropicBetas ?? betaNames(process.env[ANTHROPIC_BETA_ENV])),
      secrets: () => this.secrets,
      emit: (event) => this.emit(event),
    };
    this.server = createServer((request, response) => {
      handleExchange(this.exchange, request, response).catch((error: Error) => {
        log.error(`${this.name} ${request.method} ${request.url} failed: ${error.stack ?? error.message}`);
        if (!response.headersSent) response.writeHead(500, { "content-type": "application/json" });
        response.end(
          JSON.stringify({ error: { message: `drydock gateway: internal error: ${error.message}` } }),
        );
      });
    });
  }

  /** Starts listening; a unix socket is made private to drydock's user (see socket-dir.ts). */
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
      await keepSocketPrivate(socketPath);
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
