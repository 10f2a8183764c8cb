/**
 * Streamable HTTP transport: several clients at once, each an MCP session with its own sessions
 * and task stacks. Every request needs the bearer token; Host and Origin are checked against DNS
 * rebinding; bodies are capped. A client that ends its MCP session, whose connections all closed
 * and stayed closed for a short grace, or that stays idle past the limit has its boxes removed
 * (released for session_resume when the server keeps sessions). Every other path is the read-only live view (live/live-view.ts), behind
 * the same Host and Origin checks and a key of its own: the page shows every client's sessions,
 * so the token every MCP client holds does not open it.
 */
import { randomBytes, randomUUID } from "node:crypto";
import { createServer, type IncomingMessage, type ServerResponse, type Server } from "node:http";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { isInitializeRequest } from "@modelcontextprotocol/sdk/types.js";
import { DrydockError } from "../util/errors.js";
import { logger } from "../util/log.js";
import { stateDir } from "../util/paths.js";
import type { DrydockServer } from "./drydock-server.js";
import { CredentialFiles } from "./credential-files.js";
import { allowedHosts, hostAllowed, originAllowed, tokenMatches } from "./http-guard.js";
import { taskStackTools } from "../tools/task-stack-tools.js";
import { LiveView } from "./live/live-view.js";

const log = logger("http");

export interface HttpOptions {
  host: string;
  port: number;
  token?: string;
  /** Extra Host values to accept (e.g. a name a reverse proxy uses). */
  allowedHosts?: string[];
  maxBodyBytes?: number;
  /** Idle MCP sessions are closed after this long. Default 30 minutes. */
  idleTimeoutMs?: number;
  /**
   * How long after a client's last connection to the server closed its MCP session is closed too
   * (and its sessions removed, unless kept), when nothing of it comes back. Default one minute.
   * Only a client that held a stream open is seen to go; one that never did is closed when idle.
   */
  disconnectGraceMs?: number;
}

export interface HttpHandle {
  url: string;
  /** The live view: a read-only page of the sessions, their logs, diffs, task stacks and cost. */
  liveUrl: string;
  port: number;
  token: string;
  tokenFile?: string;
  /** The live view's own credential, for the person who runs the server; MCP clients never get it. */
  liveKey: string;
  liveKeyFile: string;
  close(): Promise<void>;
}

interface Client {
  transport: StreamableHTTPServerTransport;
  lastSeen: number;
  /** Its requests being answered and its streams open now. */
  open: number;
  /**
   * It has held the standalone stream (GET) the SDKs open after initialize: its connections
   * closing then means it went away. A client that never opened one may be between calls.
   */
  streamed: boolean;
  /** Closes the MCP session once the grace after its last connection closed runs out. */
  goneTimer?: NodeJS.Timeout;
}

function send(
  res: ServerResponse,
  status: number,
  message: string,
  headers: Record<string, string> = {},
): void {
  res.writeHead(status, { "content-type": "application/json", ...headers });
  res.end(JSON.stringify({ jsonrpc: "2.0", error: { code: -32_000, message }, id: null }));
}

async function readBody(req: IncomingMessage, max: number): Promise<Buffer | "too-large"> {
  const declared = Number(req.headers["content-length"] ?? 0);
  if (declared > max) return "too-large";
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > max) return "too-large";
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks);
}

export async function serveHttp(server: DrydockServer, options: HttpOptions): Promise<HttpHandle> {
  const token = options.token ?? randomBytes(32).toString("base64url");
  let tokenFile: string | undefined;
  // Made at every start, never from the MCP token: a client holding that cannot derive it.
  const liveKey = randomBytes(32).toString("base64url");
  let liveKeyFile = "";
  const maxBody = options.maxBodyBytes ?? 4 * 1024 * 1024;
  const idleMs = options.idleTimeoutMs ?? 30 * 60_000;
  const graceMs = options.disconnectGraceMs ?? 60_000;
  const clients = new Map<string, Client>();
  let hosts = new Set<string>();
  let liveUrl = "";
  let port = options.port;
  // Made at the first request for it: a server that fails to listen never needs one.
  let live: LiveView | undefined;
  const liveView = () =>
    (live ??= new LiveView(
      {
        state: stateDir(),
        tasksDir: server.config.tasksDir,
        taskTools: server.tools.some((tool) => taskStackTools.includes(tool)),
        sessions: () => server.manager.list(),
      },
      { key: liveKey, keyFile: liveKeyFile, url: () => liveUrl, port: () => port },
    ));

  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    if (!hostAllowed(req.headers.host, hosts)) return send(res, 403, "forbidden: Host header not allowed");
    if (!originAllowed(req.headers.origin, hosts)) return send(res, 403, "forbidden: Origin not allowed");
    const url = new URL(req.url ?? "/", "http://localhost");
    if (url.pathname !== "/mcp") return liveView().handle(req, res, url);
    if (!tokenMatches(req.headers.authorization, token)) {
      return send(
        res,
        401,
        "unauthorized: send Authorization: Bearer <token> (DRYDOCK_TOKEN, or the token file the server printed)",
        {
          "www-authenticate": 'Bearer realm="drydock"',
        },
      );
    }
    let body: unknown;
    if (req.method === "POST") {
      const raw = await readBody(req, maxBody);
      if (raw === "too-large") return send(res, 413, `request body over ${maxBody} bytes`);
      try {
        body = JSON.parse(raw.toString("utf8"));
      } catch {
        return send(res, 400, "parse error: the body is not JSON");
      }
    }
    const sessionHeader = req.headers["mcp-session-id"];
    const id = Array.isArray(sessionHeader) ? sessionHeader[0] : sessionHeader;
    let client = id ? clients.get(id) : undefined;
    if (!client) {
      if (id) return send(res, 404, "unknown MCP session; initialize a new one");
      if (req.method !== "POST" || !isInitializeRequest(body)) {
        return send(res, 400, "bad request: no MCP session; start with an initialize request");
      }
      // The MCP session id is chosen here so the client's tools are scoped to it from the start.
      const sid = randomUUID();
      const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
        sessionIdGenerator: () => sid,
        onsessioninitialized: () => {
          clients.set(sid, fresh);
          log.info(`client ${sid.slice(0, 8)} connected`);
        },
      });
      const fresh: Client = { transport, lastSeen: Date.now(), open: 0, streamed: false };
      transport.onclose = () => {
        clearTimeout(fresh.goneTimer);
        if (clients.delete(sid)) log.info(`client ${sid.slice(0, 8)} disconnected`);
        void server.disconnectClient(sid);
      };
      await server.connectClient(sid).connect(transport);
      client = fresh;
    }
    watchConnection(client, req, res);
    await client.transport.handleRequest(req, res, body);
  };

  /** Counts the client's open requests and streams; when the last closes, its grace starts. */
  const watchConnection = (client: Client, req: IncomingMessage, res: ServerResponse) => {
    client.lastSeen = Date.now();
    client.open++;
    clearTimeout(client.goneTimer);
    client.goneTimer = undefined;
    if (req.method === "GET") client.streamed = true;
    res.once("close", () => {
      client.open--;
      client.lastSeen = Date.now();
      if (client.open > 0 || !client.streamed) return;
      client.goneTimer = setTimeout(() => {
        log.info(
          `client connection closed ${Math.round(graceMs / 1000)} s ago and did not come back; closing it`,
        );
        void client.transport.close();
      }, graceMs);
      client.goneTimer.unref();
    });
  };

  const http: Server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      log.error(`request failed: ${(error as Error).message}`);
      if (!res.headersSent) send(res, 500, "internal error");
    });
  });
  http.requestTimeout = 0;
  await new Promise<void>((resolve, reject) => {
    http.once("error", (error: NodeJS.ErrnoException) =>
      reject(
        error.code === "EADDRINUSE"
          ? new DrydockError(
              "port_in_use",
              `port ${options.port} on ${options.host} is already in use; choose another with --port, or --port 0 for any free one`,
            )
          : error,
      ),
    );
    http.listen(options.port, options.host, resolve);
  });
  const address = http.address();
  port = typeof address === "object" && address ? address.port : options.port;
  hosts = allowedHosts(options.host, port, options.allowedHosts);
  // Written once listening: a server that failed to start leaves a running one's files in place,
  // and a second server of the state directory writes files of its own (credential-files.ts).
  const credentials = CredentialFiles.claim(stateDir(), port);
  if (!options.token) tokenFile = credentials.writeToken(token);
  liveKeyFile = credentials.writeLiveKey(liveKey);
  const sweep = setInterval(
    () => {
      for (const [sid, c] of clients) {
        if (Date.now() - c.lastSeen > idleMs) {
          log.info(`client ${sid.slice(0, 8)} idle for ${Math.round(idleMs / 60_000)} min; closing it`);
          void c.transport.close();
        }
      }
    },
    Math.min(idleMs, 60_000),
  );
  sweep.unref();
  const hostForUrl = options.host.includes(":") ? `[${options.host}]` : options.host;
  liveUrl = `http://${hostForUrl}:${port}/`;
  return {
    url: `http://${hostForUrl}:${port}/mcp`,
    liveUrl,
    port,
    token,
    tokenFile,
    liveKey,
    liveKeyFile,
    close: async () => {
      clearInterval(sweep);
      for (const c of clients.values()) clearTimeout(c.goneTimer);
      live?.close();
      await Promise.allSettled([...clients.values()].map((c) => c.transport.close()));
      await new Promise<void>((resolve) => http.close(() => resolve()));
      http.closeAllConnections();
      credentials.release();
    },
  };
}
