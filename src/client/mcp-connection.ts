import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { Progress } from "@modelcontextprotocol/sdk/types.js";
import { logger } from "../util/log.js";
import { ServerConnectError } from "./call-failure.js";
import type { AiderServerConfig } from "./server-config.js";
import type { ToolReply } from "./tool-reply.js";

const log = logger("aider-bridge");
const clientInfo = { name: "drydock-aider-bridge", version: "0.1.0" };
const maxStderrTailChars = 2_000;
const pingTimeoutMs = 10_000;

/** Per-call request settings handed to the SDK. */
export interface ToolCallOptions {
  timeoutMs: number;
  maxTotalTimeoutMs?: number;
  signal?: AbortSignal;
  onProgress?: (progress: Progress) => void;
}

function definedEntries(
  env: Record<string, string | undefined> | undefined,
): Record<string, string> | undefined {
  if (!env) return undefined;
  return Object.fromEntries(
    Object.entries(env).filter((entry): entry is [string, string] => entry[1] !== undefined),
  );
}

function describeTarget(server: AiderServerConfig): string {
  if (server.transport === "http") return server.url;
  return `server ${JSON.stringify([server.command, ...(server.args ?? [])].join(" "))}`;
}

/**
 * One MCP client connection to the server, opened on first use and reused; when the server went
 * away between calls the next call opens a new one (once). Knows the SDK's transports so the
 * bridge does not.
 */
export class McpConnection {
  private client: Client | undefined;
  private connecting: Promise<Client> | undefined;
  private closed = false;
  private stderrTail = "";

  constructor(
    private readonly server: AiderServerConfig,
    private readonly connectTimeoutMs: number,
  ) {}

  /** True while a connection is open. */
  get connected(): boolean {
    return this.client !== undefined;
  }

  /** The last lines the stdio server wrote to stderr (empty for HTTP). */
  get recentStderr(): string {
    return this.stderrTail;
  }

  /**
   * Calls a tool; throws a ServerConnectError when no connection could be made. The call itself is
   * sent once and never repeated: a server that dies during it may have done part of the work.
   */
  async callTool(name: string, args: Record<string, unknown>, options: ToolCallOptions): Promise<ToolReply> {
    return await this.send(await this.open(), name, args, options);
  }

  /** Closes the connection (and stops a stdio server); later calls fail. */
  async close(): Promise<void> {
    this.closed = true;
    const pending = this.connecting;
    if (pending) await pending.catch(() => undefined);
    const client = this.client;
    this.client = undefined;
    if (!client) return;
    const transport = client.transport;
    if (transport instanceof StreamableHTTPClientTransport) {
      // Lets the server free the session now instead of waiting for it to expire.
      await transport.terminateSession().catch(() => undefined);
    }
    await client.close().catch(() => undefined);
  }

  private send(
    client: Client,
    name: string,
    args: Record<string, unknown>,
    options: ToolCallOptions,
  ): Promise<ToolReply> {
    const onProgress = options.onProgress;
    return client.callTool({ name, arguments: args }, undefined, {
      timeout: options.timeoutMs,
      maxTotalTimeout: options.maxTotalTimeoutMs,
      signal: options.signal,
      // Asking for progress is what lets a long aider run keep the request alive.
      onprogress: (progress) => onProgress?.(progress),
      resetTimeoutOnProgress: true,
    });
  }

  /**
   * The open connection if it still answers a ping, else a new one. The ping is what makes a
   * reconnect safe: a child that just exited, an HTTP server that restarted and forgot our session,
   * or one that stopped listening all fail it before any tool call is sent.
   */
  private async open(): Promise<Client> {
    if (this.closed) throw new Error("the connection is closed");
    const current = this.client;
    if (current) {
      try {
        await current.ping({ timeout: Math.min(this.connectTimeoutMs, pingTimeoutMs) });
        return current;
      } catch (error) {
        log.debug(`${describeTarget(this.server)} went away (${String(error)}); reconnecting once`);
        await this.discard(current);
      }
    }
    this.connecting ??= this.connect().finally(() => {
      this.connecting = undefined;
    });
    return await this.connecting;
  }

  private async discard(client: Client): Promise<void> {
    if (this.client === client) this.client = undefined;
    await client.close().catch(() => undefined);
  }

  private async connect(): Promise<Client> {
    const target = describeTarget(this.server);
    this.stderrTail = "";
    const client = new Client(clientInfo, { capabilities: {} });
    client.onclose = () => {
      if (this.client === client) {
        log.debug(`connection to ${target} closed`);
        this.client = undefined;
      }
    };
    client.onerror = (error) => log.debug(`${target}: ${error.message}`);
    try {
      await client.connect(this.createTransport(), { timeout: this.connectTimeoutMs });
    } catch (cause) {
      await client.close().catch(() => undefined);
      throw new ServerConnectError(target, this.stderrTail, { cause });
    }
    if (client.transport === undefined) {
      throw new ServerConnectError(target, this.stderrTail, {
        cause: new Error("the server closed the connection"),
      });
    }
    if (this.closed) {
      await client.close().catch(() => undefined);
      throw new Error("the connection is closed");
    }
    log.debug(`connected to ${target}`);
    this.client = client;
    return client;
  }

  private createTransport(): StdioClientTransport | StreamableHTTPClientTransport {
    const server = this.server;
    if (server.transport === "http") {
      const requestInit = server.token ? { headers: { Authorization: `Bearer ${server.token}` } } : undefined;
      return new StreamableHTTPClientTransport(new URL(server.url), { requestInit });
    }
    const transport = new StdioClientTransport({
      command: server.command,
      args: server.args,
      env: definedEntries(server.env),
      cwd: server.cwd,
      stderr: "pipe",
    });
    const forward = server.stderr !== "ignore";
    transport.stderr?.on("data", (chunk: Buffer) => {
      this.stderrTail = (this.stderrTail + chunk.toString("utf8")).slice(-maxStderrTailChars);
      if (forward) process.stderr.write(chunk);
    });
    return transport;
  }
}
