/**
 * The MCP endpoint command agents talk to: one Streamable HTTP server on loopback for the whole
 * run, and one bearer token per attempt that opens exactly one session, the attempt's box. The
 * tools are the server's own (registered by the same code), minus those that create, destroy or
 * apply sessions to the host: a task's work leaves the box only as the graded diff. A token
 * stops working (and its MCP sessions close) when its attempt ends.
 */
import { createHash, randomBytes, randomUUID } from "node:crypto";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { isInitializeRequest } from "@modelcontextprotocol/sdk/types.js";
import { allowedHosts, hostAllowed } from "../server/http-guard.js";
import { registerTools, type Redact } from "../server/register-tools.js";
import type { Session } from "../session/session.js";
import type { TaskStackOpener } from "../tasks/task-stack-access.js";
import { allTools } from "../tools/all-tools.js";
import type { AiderService } from "../tools/aider/aider-service.js";
import { aiderTools } from "../tools/aider/aider-tools.js";
import type { ToolServices } from "../tools/tool.js";
import { logger } from "../util/log.js";
import { SingleSessionAccess } from "./single-session-access.js";

const log = logger("eval");
const HIDDEN_TOOLS = new Set(["session_create", "session_destroy", "session_apply", "session_resume"]);
const MAX_BODY_BYTES = 4 * 1024 * 1024;

export interface McpGrant {
  url: string;
  token: string;
  sessionId: string;
  /** Ends the grant: the token stops working and its MCP sessions close. */
  revoke(): Promise<void>;
}

export interface EndpointServices {
  /** Serves aider_ai_code in the task's box when given. */
  aider?: AiderService;
  /** Where the agent's task stack is kept. */
  stacks: TaskStackOpener;
  redact?: Redact;
}

interface Grant {
  session: Session;
  transports: Map<string, StreamableHTTPServerTransport>;
}

const digest = (token: string) => createHash("sha256").update(token).digest("hex");

function send(res: ServerResponse, status: number, message: string): void {
  res.writeHead(status, { "content-type": "application/json" });
  res.end(JSON.stringify({ jsonrpc: "2.0", error: { code: -32_000, message }, id: null }));
}

async function readJson(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > MAX_BODY_BYTES) throw new RangeError("body too large");
    chunks.push(chunk as Buffer);
  }
  return JSON.parse(Buffer.concat(chunks).toString("utf8"));
}

export class TaskMcpEndpoint {
  /** Grants by the sha256 of their token: a lookup that never compares the token itself. */
  private readonly grants = new Map<string, Grant>();
  private readonly http: Server;
  private hosts = new Set<string>();
  /** The endpoint's URL, e.g. http://127.0.0.1:41234/mcp. */
  url = "";

  private constructor(private readonly services: EndpointServices) {
    this.http = createServer((req, res) => {
      this.handle(req, res).catch((error: unknown) => {
        log.warn(`MCP request failed: ${(error as Error).message}`);
        if (!res.headersSent) send(res, 500, "internal error");
      });
    });
    this.http.requestTimeout = 0;
  }

  /** Listens on a free loopback port. */
  static async start(services: EndpointServices): Promise<TaskMcpEndpoint> {
    const endpoint = new TaskMcpEndpoint(services);
    await new Promise<void>((resolve, reject) => {
      endpoint.http.once("error", reject);
      endpoint.http.listen(0, "127.0.0.1", resolve);
    });
    const address = endpoint.http.address();
    const port = typeof address === "object" && address ? address.port : 0;
    endpoint.url = `http://127.0.0.1:${port}/mcp`;
    endpoint.hosts = allowedHosts("127.0.0.1", port);
    return endpoint;
  }

  /** A token that opens `session` and nothing else, until revoked. */
  grant(session: Session): McpGrant {
    const token = randomBytes(32).toString("base64url");
    const key = digest(token);
    const grant: Grant = { session, transports: new Map() };
    this.grants.set(key, grant);
    return {
      url: this.url,
      token,
      sessionId: session.id,
      revoke: async () => {
        this.grants.delete(key);
        await Promise.allSettled([...grant.transports.values()].map((t) => t.close()));
      },
    };
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    if (!hostAllowed(req.headers.host, this.hosts))
      return send(res, 403, "forbidden: Host header not allowed");
    if (req.headers.origin !== undefined)
      return send(res, 403, "forbidden: browsers may not call this endpoint");
    const bearer = /^Bearer\s+(\S+)\s*$/i.exec(req.headers.authorization ?? "")?.[1];
    const grant = bearer ? this.grants.get(digest(bearer)) : undefined;
    if (!grant) return send(res, 401, "unauthorized: send Authorization: Bearer $DRYDOCK_MCP_TOKEN");
    if (new URL(req.url ?? "/", "http://localhost").pathname !== "/mcp") {
      return send(res, 404, "not found: the MCP endpoint is /mcp");
    }
    let body: unknown;
    if (req.method === "POST") {
      try {
        body = await readJson(req);
      } catch (error) {
        return send(res, error instanceof RangeError ? 413 : 400, (error as Error).message);
      }
    }
    const header = req.headers["mcp-session-id"];
    const sid = Array.isArray(header) ? header[0] : header;
    let transport = sid ? grant.transports.get(sid) : undefined;
    if (!transport) {
      if (sid) return send(res, 404, "unknown MCP session; initialize a new one");
      if (req.method !== "POST" || !isInitializeRequest(body)) {
        return send(res, 400, "bad request: no MCP session; start with an initialize request");
      }
      transport = await this.connect(grant);
    }
    await transport.handleRequest(req, res, body);
  }

  private async connect(grant: Grant): Promise<StreamableHTTPServerTransport> {
    const id = randomUUID();
    const transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => id,
      onsessioninitialized: () => void grant.transports.set(id, transport),
    });
    transport.onclose = () => void grant.transports.delete(id);
    const server = new McpServer(
      { name: "drydock", version: "0.1.0" },
      {
        instructions: `drydock eval: you work in one sandboxed copy of a git repository (session ${grant.session.id}). Use bash and file_editor (or aider_ai_code) to make the change the task asks for; your diff is graded by the task's tests when you exit.`,
      },
    );
    const access = new SingleSessionAccess(grant.session, this.services.stacks);
    const services = { sessions: access, taskStacks: access, aider: this.services.aider } as ToolServices;
    // Every tool but the hidden ones, not serve's smaller default set: agent programs are written
    // against the list docs/eval.md gives, and runs stay comparable with earlier ones.
    const tools = allTools(this.services.aider ? aiderTools : []).filter((t) => !HIDDEN_TOOLS.has(t.name));
    registerTools(server, tools, `eval-${grant.session.id}`, services, this.services.redact);
    await server.connect(transport);
    return transport;
  }

  async close(): Promise<void> {
    const all = [...this.grants.values()].flatMap((g) => [...g.transports.values()]);
    this.grants.clear();
    await Promise.allSettled(all.map((t) => t.close()));
    await new Promise<void>((resolve) => this.http.close(() => resolve()));
    this.http.closeAllConnections();
  }
}
