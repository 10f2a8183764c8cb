import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { logger } from "../util/log.js";
import { readBody } from "./http-body.js";
import { OfflineModel } from "./offline-model.js";

const log = logger("gateway");

export interface MockLlmServerOptions {
  model: OfflineModel;
  /** Default 127.0.0.1: the mock is for this machine only. */
  host?: string;
  /** Default 0: any free port. */
  port?: number;
}

/** The offline model on its own HTTP port, as `drydock mock-llm` runs it. */
export class MockLlmServer implements AsyncDisposable {
  private constructor(
    private readonly server: Server,
    /** Base URL for an OpenAI client, e.g. `http://127.0.0.1:4000/v1`. */
    readonly url: string,
    readonly port: number,
  ) {}

  static async start(options: MockLlmServerOptions): Promise<MockLlmServer> {
    const host = options.host ?? "127.0.0.1";
    const server = createServer((request, response) => {
      void (async () => {
        try {
          const body = await readBody(request);
          const answer = options.model.answer({
            method: request.method ?? "GET",
            path: request.url ?? "/",
            body: body.toString("utf8"),
          });
          log.debug(`mock-llm ${request.method} ${request.url} -> ${answer.status}`);
          response.writeHead(answer.status, {
            "content-type": answer.contentType,
            "cache-control": "no-cache",
          });
          for (const chunk of answer.chunks) response.write(chunk);
          response.end();
        } catch (error) {
          log.warn(`mock-llm ${request.method} ${request.url} failed: ${(error as Error).message}`);
          if (!response.headersSent) response.writeHead(400, { "content-type": "application/json" });
          response.end(
            JSON.stringify({ error: { message: (error as Error).message, type: "invalid_request_error" } }),
          );
        }
      })();
    });
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(options.port ?? 0, host, () => {
        server.off("error", reject);
        resolve();
      });
    });
    const port = (server.address() as AddressInfo).port;
    const urlHost = host.includes(":") ? `[${host}]` : host;
    return new MockLlmServer(server, `http://${urlHost}:${port}/v1`, port);
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }
}
