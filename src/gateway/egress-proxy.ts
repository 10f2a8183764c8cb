/**
 * A session's egress proxy: an HTTP CONNECT proxy on a unix socket in the session's gateway
 * directory (the box reaches it through a relay on its own loopback). It lets a tunnel through
 * only to an allowed host on port 443, decided before anything is resolved or dialled; it
 * answers everything else, plain http included, with a 403 whose reason line and body name the
 * refused host and the flag that allows it. Each connection is logged and counted.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { unlink } from "node:fs/promises";
import type { Duplex } from "node:stream";
import type { Socket } from "node:net";
import { logger } from "../util/log.js";
import { egressDecision, parseConnectTarget, targetText, type EgressTarget } from "./egress-allowlist.js";
import { hostDial, type EgressDial } from "./egress-dial.js";
import { EgressTally, type EgressReport } from "./egress-tally.js";
import { prepareSocketPath } from "./socket-dir.js";

const log = logger("egress");

export interface EgressProxyOptions {
  /** Unix socket to listen on. */
  socketPath: string;
  /** Canonical rules (see `parseEgressEntries`); empty refuses everything. */
  allowlist: readonly string[];
  /** Names the proxy in logs: the session id. */
  label: string;
  /** How allowed targets are reached; default: resolve and connect from the host. */
  dial?: EgressDial;
  /** Tunnels open at once; more are refused (default 64). */
  maxTunnels?: number;
}

export class EgressProxy implements AsyncDisposable {
  private readonly tally: EgressTally;
  private readonly sockets = new Set<Duplex>();
  private readonly dial: EgressDial;
  private tunnels = 0;
  private closed = false;

  private constructor(
    private readonly options: EgressProxyOptions,
    private readonly server: Server,
  ) {
    this.tally = new EgressTally(options.allowlist);
    this.dial = options.dial ?? hostDial();
  }

  /** Starts listening on `socketPath` (a stale socket from a crash is replaced). */
  static async start(options: EgressProxyOptions): Promise<EgressProxy> {
    await prepareSocketPath(options.socketPath);
    const server = createServer();
    const proxy = new EgressProxy(options, server);
    server.on("connect", (req: IncomingMessage, socket: Duplex, head: Buffer) => {
      proxy.track(socket);
      void proxy.tunnel(req, socket, head);
    });
    server.on("request", (req: IncomingMessage, res: ServerResponse) => proxy.refusePlainHttp(req, res));
    server.on("connection", (socket: Socket) => proxy.track(socket));
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(options.socketPath, () => {
        server.off("error", reject);
        resolve();
      });
    });
    log.debug(`session ${options.label}: egress proxy on ${options.socketPath}`);
    return proxy;
  }

  get socketPath(): string {
    return this.options.socketPath;
  }

  /** The allowlist and the counts so far. */
  report(): EgressReport {
    return this.tally.report();
  }

  private track(socket: Duplex): void {
    this.sockets.add(socket);
    socket.once("close", () => this.sockets.delete(socket));
  }

  private async tunnel(req: IncomingMessage, client: Duplex, head: Buffer): Promise<void> {
    const label = this.options.label;
    client.on("error", () => undefined);
    const target = parseConnectTarget(req.url ?? "");
    if (!target) {
      const shown = (req.url ?? "").replace(/[^\x21-\x7e]/g, "?").slice(0, 200);
      log.warn(`session ${label}: egress refused ${shown}: not a host:port`);
      this.tally.record("(invalid)", 0, "refused");
      return answer(
        client,
        400,
        "drydock egress: not a host:port",
        `drydock refused CONNECT ${shown}: the target is not a host:port\n`,
      );
    }
    const where = targetText(target);
    const decision = egressDecision(this.options.allowlist, target);
    if (!decision.allowed) {
      log.warn(`session ${label}: egress refused ${where}: ${decision.why}`);
      this.tally.record(target.host, target.port, "refused");
      const { reason, body } = refusal(target, decision.why, this.options.allowlist);
      return answer(client, 403, reason, body);
    }
    const maxTunnels = this.options.maxTunnels ?? 64;
    if (this.tunnels >= maxTunnels) {
      log.warn(`session ${label}: egress refused ${where}: ${maxTunnels} tunnels already open`);
      this.tally.record(target.host, target.port, "refused");
      return answer(
        client,
        429,
        `drydock egress: ${maxTunnels} connections already open`,
        `drydock refused ${where}: this session already has ${maxTunnels} connections open; close some and retry\n`,
      );
    }
    this.tunnels++;
    const abort = new AbortController();
    const onEarlyClose = () => abort.abort();
    client.once("close", onEarlyClose);
    let upstream: Socket;
    try {
      upstream = await this.dial(target.host, target.port, abort.signal);
    } catch (error) {
      this.tunnels--;
      client.off("close", onEarlyClose);
      const message = (error as Error).message;
      log.warn(`session ${label}: egress failed ${where}: ${message}`);
      this.tally.record(target.host, target.port, "failed");
      return answer(
        client,
        502,
        `drydock egress: ${where} unreachable`,
        `drydock could not reach ${where}: ${message}\n`,
      );
    }
    client.off("close", onEarlyClose);
    this.track(upstream);
    if (this.closed || client.destroyed) {
      this.tunnels--;
      upstream.destroy();
      return;
    }
    let settled = false;
    const finish = () => {
      if (settled) return;
      settled = true;
      this.tunnels--;
      const up = upstream.bytesWritten;
      const down = upstream.bytesRead;
      this.tally.record(target.host, target.port, "allowed", up, down);
      log.info(`session ${label}: egress allowed ${where}, ${up} bytes up, ${down} bytes down`);
    };
    upstream.on("error", () => client.destroy());
    client.on("error", () => upstream.destroy());
    upstream.once("close", () => {
      client.destroy();
      finish();
    });
    client.once("close", () => upstream.destroy());
    client.write("HTTP/1.1 200 Connection Established\r\n\r\n");
    if (head.length > 0) upstream.write(head);
    client.pipe(upstream);
    upstream.pipe(client);
  }

  private refusePlainHttp(req: IncomingMessage, res: ServerResponse): void {
    let host = "(no host)";
    let port = 80;
    try {
      const url = new URL(req.url ?? "", "http://invalid.invalid");
      if (url.hostname !== "invalid.invalid") {
        host = url.hostname;
        port = Number(url.port || (url.protocol === "https:" ? 443 : 80));
      }
    } catch {
      // An unparsable target is refused all the same.
    }
    log.warn(`session ${this.options.label}: egress refused plain http to ${host}:${port}`);
    this.tally.record(host, port, "refused");
    const body =
      `drydock refused a plain http request to ${host}: boxes reach hosts over HTTPS only ` +
      `(a CONNECT tunnel to port 443). Use https:// instead.\n`;
    res.writeHead(403, "drydock egress: plain http is refused, use https", {
      "content-type": "text/plain; charset=utf-8",
      "content-length": Buffer.byteLength(body),
      connection: "close",
    });
    res.end(body);
  }

  /** Stops listening and cuts every open connection. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    const closing = new Promise<void>((resolve) => this.server.close(() => resolve()));
    for (const socket of this.sockets) socket.destroy();
    await closing;
    await unlink(this.options.socketPath).catch(() => undefined);
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }
}

/** The words of a refusal: a one-line reason (pip and Python show it) and a body (curl -v shows it). */
export function refusal(
  target: EgressTarget,
  why: string,
  allowlist: readonly string[],
): { reason: string; body: string } {
  const where = targetText(target);
  const listed = allowlist.length ? allowlist.join(", ") : "nothing";
  if (target.port !== 443) {
    return {
      reason: `drydock egress refused ${where} (only port 443 is allowed)`,
      body: `drydock refused ${where}: ${why}. This session may reach: ${listed}.\n`,
    };
  }
  const host = target.host.includes(":") ? `[${target.host}]` : target.host;
  return {
    reason: `drydock egress refused ${where} (allow it with drydock serve --egress ${host})`,
    body:
      `drydock refused ${where}: ${why} (${listed}).\n` +
      `Boxes reach only the hosts whoever runs drydock allows, over HTTPS. To allow this one, ` +
      `start drydock with --egress ${host}: drydock serve --egress ${host} (or drydock run --egress ${host}).\n`,
  };
}

function answer(client: Duplex, status: number, reason: string, body: string): void {
  if (client.destroyed) return;
  client.end(
    `HTTP/1.1 ${status} ${reason}\r\ncontent-type: text/plain; charset=utf-8\r\n` +
      `content-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`,
  );
}
