/**
 * One MCP connection to a running `drydock serve --http`, for the library's remote flavour. It
 * never reconnects on its own: the server ties sessions to the MCP session, and removes a
 * client's boxes when that session ends, so a new connection could not reach the old boxes.
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import {
  StreamableHTTPClientTransport,
  StreamableHTTPError,
} from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { McpError, type Progress } from "@modelcontextprotocol/sdk/types.js";
import { replyText } from "../client/tool-reply.js";
import { STRUCTURED_REPLY_META } from "../util/reply-meta.js";
import { DrydockError, LimitExceededError } from "../util/errors.js";
import { errorFromToolReply, errorMetaOf } from "./tool-error.js";

const clientInfo = { name: "drydock-library", version: "0.1.0" };
const CONNECT_TIMEOUT_MS = 30_000;

/** The server could not be reached, or the connection broke during a call. */
export class ServerUnreachableError extends DrydockError {
  override name = "ServerUnreachableError";
  constructor(url: string, detail: string, options?: { cause?: unknown }) {
    super(
      "server_unreachable",
      `no drydock server answers at ${url} (${detail}); start one with \`drydock serve --http\` and pass the URL it prints and its token (DRYDOCK_TOKEN, or the token file it names)`,
      options,
    );
  }
}

/** While a call waits: how often the server is pinged, and how long a ping may take. */
const PING_EVERY_MS = 5_000;
const PING_TIMEOUT_MS = 10_000;

export interface CallOptions {
  /** How long the server may stay silent (no reply, no progress) before the call fails. */
  timeoutMs: number;
  signal?: AbortSignal;
  onProgress?: (progress: Progress) => void;
}

export class RemoteClient {
  private constructor(
    private readonly client: Client,
    private readonly transport: StreamableHTTPClientTransport,
    readonly url: string,
  ) {}

  static async connect(url: string, token: string | undefined): Promise<RemoteClient> {
    const transport = new StreamableHTTPClientTransport(new URL(url), {
      requestInit: token ? { headers: { Authorization: `Bearer ${token}` } } : undefined,
    });
    const client = new Client(clientInfo, { capabilities: {} });
    try {
      await client.connect(transport, { timeout: CONNECT_TIMEOUT_MS });
    } catch (error) {
      await client.close().catch(() => undefined);
      throw new ServerUnreachableError(url, describeTransportError(error), { cause: error });
    }
    return new RemoteClient(client, transport, url);
  }

  /** Calls a tool and returns its structured reply; a tool error is thrown as the server's class and code. */
  async call(
    name: string,
    args: Record<string, unknown>,
    options: CallOptions,
  ): Promise<Record<string, unknown>> {
    let reply;
    // A server that dies mid-call may leave the reply's stream neither answered nor closed: a ping
    // now and then tells, so the call fails in seconds rather than at its time limit.
    const gone = new AbortController();
    let lost: unknown;
    let failed = 0;
    const watch = setInterval(() => {
      this.client.ping({ timeout: PING_TIMEOUT_MS }).then(
        () => void (failed = 0),
        (error: unknown) => {
          // Two in a row: one slow answer from a busy server is not a dead one.
          if (++failed < 2 || gone.signal.aborted) return;
          lost = error;
          gone.abort(error);
        },
      );
    }, PING_EVERY_MS);
    try {
      // This client reads structuredContent only: the reply need not carry the model's text too.
      reply = await this.client.callTool({ name, arguments: args, _meta: STRUCTURED_REPLY_META }, undefined, {
        timeout: options.timeoutMs,
        resetTimeoutOnProgress: true,
        signal: options.signal ? AbortSignal.any([options.signal, gone.signal]) : gone.signal,
        onprogress: options.onProgress,
      });
    } catch (error) {
      if (options.signal?.aborted) throw options.signal.reason ?? error;
      if (lost !== undefined) {
        throw new ServerUnreachableError(
          this.url,
          `${name}: the server stopped answering during the call (${describeTransportError(lost)})`,
          { cause: lost },
        );
      }
      // The server answered, and refused the request's size: not a server that is gone.
      if (error instanceof StreamableHTTPError && error.code === 413) {
        throw new LimitExceededError(
          `${name}: the request is larger than the server at ${this.url} takes (HTTP 413: ${error.message}); a remote drydock takes requests up to 4 MiB, so write a file larger than about 3 MiB in parts, or run drydock in-process (Drydock.local)`,
        );
      }
      throw new ServerUnreachableError(this.url, `${name}: ${describeTransportError(error)}`, {
        cause: error,
      });
    } finally {
      clearInterval(watch);
    }
    const text = replyText(reply) ?? "";
    if (reply.isError === true) throw errorFromToolReply(text, errorMetaOf(reply));
    const structured = reply.structuredContent;
    if (typeof structured === "object" && structured !== null) return structured as Record<string, unknown>;
    return JSON.parse(text) as Record<string, unknown>;
  }

  /** Ends the MCP session (the server removes any box still open in it) and the connection. */
  async close(): Promise<void> {
    await this.transport.terminateSession().catch(() => undefined);
    await this.client.close().catch(() => undefined);
  }
}

function describeTransportError(error: unknown): string {
  if (error instanceof StreamableHTTPError && (error.code === 401 || error.code === 403)) {
    return `HTTP ${error.code}: the token is missing or wrong; pass the server's token`;
  }
  if (error instanceof McpError || error instanceof Error) {
    const code = (error as { cause?: { code?: unknown } }).cause?.code;
    return typeof code === "string" ? `${error.message} (${code})` : error.message;
  }
  return String(error);
}
