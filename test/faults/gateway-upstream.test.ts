/**
 * The model provider fails under the gateway: the connection drops in the middle of a streamed
 * answer, or before any answer. The caller gets a clear error, the gateway keeps serving, and its
 * accounting stays exact (the dropped call is counted, a call that reached no one is not, and the
 * session's limits hold). Once at the gateway itself, once through aider in a real box.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { createServer, request, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { LlmGateway, OfflineModel, type ExchangeEvent } from "../../src/gateway/index.js";
import { serverExtensions } from "../../src/server/extensions.js";
import { inMemoryDrydock, ok, type InMemoryDrydock } from "../helpers/mcp-client.js";
import { tempRepo, type TempRepo } from "../helpers/repos.js";

const KEY = "sk-drydock-upstream-0123456789";
type Behaviour = "drop-mid-stream" | "reset-before-headers" | "refuse" | "answer";

/** An OpenAI stand-in that behaves as told, call by call; "answer" replies with the offline model. */
class FlakyUpstream {
  readonly seen: Behaviour[] = [];
  private readonly model = OfflineModel.fromFile();
  private constructor(
    private readonly plan: Behaviour[],
    private readonly server: Server,
  ) {}

  static async start(plan: Behaviour[]): Promise<FlakyUpstream> {
    const server = createServer();
    const self = new FlakyUpstream(plan, server);
    server.on("request", (req: IncomingMessage, res: ServerResponse) => self.handle(req, res));
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    return self;
  }

  get url(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  async stop(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise((resolve) => this.server.close(resolve));
  }

  private handle(req: IncomingMessage, res: ServerResponse): void {
    const body: Buffer[] = [];
    req.on("data", (chunk: Buffer) => body.push(chunk));
    req.on("end", () => {
      const behaviour = this.plan[this.seen.length] ?? this.plan.at(-1) ?? "answer";
      this.seen.push(behaviour);
      if (behaviour === "reset-before-headers") return void req.socket.destroy();
      if (behaviour === "refuse") {
        res.writeHead(400, { "content-type": "application/json" });
        return void res.end(
          JSON.stringify({ error: { message: "the provider is still down", type: "invalid_request_error" } }),
        );
      }
      if (behaviour === "drop-mid-stream") {
        res.writeHead(200, { "content-type": "text/event-stream" });
        const chunk = {
          id: "c1",
          object: "chat.completion.chunk",
          model: "gpt-4o",
          choices: [{ index: 0, delta: { role: "assistant", content: "greet.py\n" }, finish_reason: null }],
        };
        res.write(`data: ${JSON.stringify(chunk)}\n\n`);
        setTimeout(() => res.socket?.destroy(), 100);
        return;
      }
      const answer = this.model.answer({
        method: req.method ?? "POST",
        path: req.url ?? "/",
        body: Buffer.concat(body).toString("utf8"),
      });
      res.writeHead(answer.status, { "content-type": answer.contentType });
      for (const piece of answer.chunks) res.write(piece);
      res.end();
    });
  }
}

/** A streamed chat call over the gateway's socket: the status, what arrived, and how it ended. */
function streamedCall(
  socketPath: string,
): Promise<{ status: number; body: string; ended: "complete" | "broken" }> {
  return new Promise((resolve, reject) => {
    const req = request(
      {
        socketPath,
        path: "/openai/v1/chat/completions",
        method: "POST",
        headers: { "content-type": "application/json" },
      },
      (res) => {
        let body = "";
        res.setEncoding("utf8");
        res.on("data", (chunk: string) => (body += chunk));
        res.on("end", () => resolve({ status: res.statusCode ?? 0, body, ended: "complete" }));
        res.on("error", () => resolve({ status: res.statusCode ?? 0, body, ended: "broken" }));
        res.on("aborted", () => resolve({ status: res.statusCode ?? 0, body, ended: "broken" }));
      },
    );
    req.on("error", reject);
    req.end(
      JSON.stringify({ model: "gpt-4o", stream: true, messages: [{ role: "user", content: "greet" }] }),
    );
  });
}

describe("the gateway when its upstream fails", () => {
  it("a stream dropped midway reaches the caller broken, is counted, and the next call and the limit work", async () => {
    const upstream = await FlakyUpstream.start(["drop-mid-stream", "reset-before-headers", "answer"]);
    const dir = mkdtempSync(join(tmpdir(), "drydock-gw-"));
    const gateway = await LlmGateway.start({
      socketPath: join(dir, "gateway.sock"),
      keys: { openai: { value: KEY, envName: "OPENAI_API_KEY" } },
      upstreams: { openai: upstream.url },
      allowedHosts: [new URL(upstream.url).host],
      limits: { maxRequests: 2 },
    });
    const events: ExchangeEvent[] = [];
    gateway.onExchange((e) => events.push(e));
    try {
      const dropped = await streamedCall(gateway.address);
      expect(dropped.status).toBe(200);
      expect(dropped.ended).toBe("broken");
      expect(dropped.body).toContain("greet.py");
      expect(dropped.body).not.toContain("[DONE]");
      await expect.poll(() => events.length).toBe(1);
      expect(gateway.usage()).toMatchObject({ requests: 1, refused: 0 });

      // No answer at all: a clear 502 refusal, and the call is not counted against the session.
      const unreachable = await streamedCall(gateway.address);
      expect(unreachable.status).toBe(502);
      expect(JSON.parse(unreachable.body).error.code).toBe("upstream_unreachable");
      expect(gateway.usage()).toMatchObject({ requests: 1, refused: 1 });

      const answered = await streamedCall(gateway.address);
      expect(answered).toMatchObject({ status: 200, ended: "complete" });
      expect(answered.body).toContain("[DONE]");
      expect(gateway.usage().requests).toBe(2);

      // The limit counted the dropped call: a third call is refused.
      const limited = await streamedCall(gateway.address);
      expect(limited.status).toBe(400);
      expect(JSON.parse(limited.body).error.code).toBe("limit_exceeded");
      expect(upstream.seen).toEqual(["drop-mid-stream", "reset-before-headers", "answer"]);
    } finally {
      await gateway.close();
      await upstream.stop();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe("aider in a box when the provider drops", () => {
  let repo: TempRepo;
  let upstream: FlakyUpstream;
  let drydock: InMemoryDrydock;
  const saved = { key: process.env.OPENAI_API_KEY, base: process.env.DRYDOCK_OPENAI_BASE_URL };

  beforeAll(async () => {
    const sample = join(process.cwd(), "examples", "sample-repo");
    repo = tempRepo(
      Object.fromEntries(readdirSync(sample).map((n) => [n, readFileSync(join(sample, n), "utf8")])),
    );
    upstream = await FlakyUpstream.start(["drop-mid-stream", "refuse", "answer"]);
    process.env.OPENAI_API_KEY = KEY;
    process.env.DRYDOCK_OPENAI_BASE_URL = upstream.url;
    drydock = await inMemoryDrydock({ repo: repo.path, ...(await serverExtensions({ maxLlmRequests: 3 })) });
  });

  afterAll(async () => {
    await drydock?.[Symbol.asyncDispose]();
    await upstream?.stop();
    repo?.[Symbol.dispose]();
    for (const [name, value] of [
      ["OPENAI_API_KEY", saved.key],
      ["DRYDOCK_OPENAI_BASE_URL", saved.base],
    ] as const) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
  });

  const aider = async () =>
    ok(
      await drydock.client.callTool(
        {
          name: "aider_ai_code",
          arguments: {
            ai_coding_prompt: "Make greet() return 'Hello, NAME!' so the tests pass",
            relative_editable_files: ["greet.py"],
          },
        },
        undefined,
        { timeout: 170_000 },
      ),
    );

  it("gives a clear error, keeps the task stack and the accounting, and the next call works until the limit", async () => {
    ok(
      await drydock.client.callTool({ name: "create_new_task", arguments: { title: "fix greet", body: "" } }),
    );
    const failed = await aider();
    expect(failed.success).toBe(false);
    expect(failed.diff).toMatch(/peer closed connection|incomplete chunked read|Connection/i);
    expect(failed.diff).toMatch(/the provider is still down/);
    expect(failed.llm_requests).toBe(2);
    expect(JSON.stringify(failed)).not.toContain(KEY);

    const fixed = await aider();
    expect(fixed.success).toBe(true);
    expect(fixed.diff).toContain('+    return f"Hello, {name}!"');
    expect(fixed.llm_requests).toBe(1);

    // Three calls were counted (the dropped one too): the session's limit of 3 is reached.
    const limited = await aider();
    expect(limited.success).toBe(false);
    expect(limited.diff).toMatch(/request limit reached: this session has made 3 of the 3/);
    expect(upstream.seen).toEqual(["drop-mid-stream", "refuse", "answer"]);

    const task = ok(await drydock.client.callTool({ name: "get_current_task", arguments: {} }));
    expect(task).toMatchObject({ zen: false, task: { title: "fix greet" } });
  });
});
