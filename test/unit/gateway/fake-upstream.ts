import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import type { AddressInfo } from "node:net";

/** A request as the fake upstream saw it. */
export interface SeenRequest {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  body: string;
}

export interface FakeReply {
  status?: number;
  contentType: string;
  chunks: string[];
  /** Resolves before the last chunk is sent: lets a test hold a stream open. */
  beforeLast?: Promise<void>;
}

const sse = (value: unknown) => `data: ${typeof value === "string" ? value : JSON.stringify(value)}\n\n`;

/**
 * Replies in each provider's shape: OpenAI chat completions (usage in the last chunk when
 * `stream_options.include_usage`), Anthropic messages (message_start + message_delta), Gemini
 * generateContent / streamGenerateContent?alt=sse (cumulative usageMetadata).
 */
export function providerReply(url: string, body: string): FakeReply {
  const request = body ? (JSON.parse(body) as Record<string, unknown>) : {};
  const stream = request.stream === true || url.includes("alt=sse");
  if (url.includes("/chat/completions")) {
    const model = String(request.model ?? "gpt-4o");
    const usage = { prompt_tokens: 1200, completion_tokens: 300, total_tokens: 1500 };
    if (!stream) {
      return {
        contentType: "application/json",
        chunks: [
          JSON.stringify({
            id: "chatcmpl-1",
            object: "chat.completion",
            model,
            choices: [
              {
                index: 0,
                message: { role: "assistant", content: "hello from openai" },
                finish_reason: "stop",
              },
            ],
            usage,
          }),
        ],
      };
    }
    const chunk = (delta: unknown, finish: string | null = null) =>
      sse({
        id: "chatcmpl-1",
        object: "chat.completion.chunk",
        model,
        choices: [{ index: 0, delta, finish_reason: finish }],
      });
    const includeUsage =
      (request.stream_options as { include_usage?: boolean } | undefined)?.include_usage === true;
    return {
      contentType: "text/event-stream",
      chunks: [
        chunk({ role: "assistant", content: "hello " }),
        chunk({ content: "from openai" }),
        chunk({}, "stop"),
        ...(includeUsage
          ? [sse({ id: "chatcmpl-1", object: "chat.completion.chunk", model, choices: [], usage })]
          : []),
        sse("[DONE]"),
      ],
    };
  }
  if (url.includes("/v1/messages")) {
    const model = String(request.model ?? "claude-sonnet-4-5");
    if (!stream) {
      return {
        contentType: "application/json",
        chunks: [
          JSON.stringify({
            id: "msg_1",
            type: "message",
            role: "assistant",
            model,
            content: [{ type: "text", text: "hello from anthropic" }],
            stop_reason: "end_turn",
            usage: { input_tokens: 2000, cache_read_input_tokens: 500, output_tokens: 100 },
          }),
        ],
      };
    }
    const event = (type: string, data: unknown) => `event: ${type}\ndata: ${JSON.stringify(data)}\n\n`;
    return {
      contentType: "text/event-stream",
      chunks: [
        event("message_start", {
          type: "message_start",
          message: {
            id: "msg_1",
            type: "message",
            role: "assistant",
            model,
            content: [],
            usage: { input_tokens: 2000, output_tokens: 1 },
          },
        }),
        event("content_block_start", {
          type: "content_block_start",
          index: 0,
          content_block: { type: "text", text: "" },
        }),
        event("content_block_delta", {
          type: "content_block_delta",
          index: 0,
          delta: { type: "text_delta", text: "hello" },
        }),
        event("content_block_stop", { type: "content_block_stop", index: 0 }),
        event("message_delta", {
          type: "message_delta",
          delta: { stop_reason: "end_turn" },
          usage: { output_tokens: 250 },
        }),
        event("message_stop", { type: "message_stop" }),
      ],
    };
  }
  if (url.includes(":generateContent") || url.includes(":streamGenerateContent")) {
    const part = (text: string, usage: { promptTokenCount: number; candidatesTokenCount: number }) => ({
      candidates: [{ content: { role: "model", parts: [{ text }] }, index: 0 }],
      usageMetadata: { ...usage, totalTokenCount: usage.promptTokenCount + usage.candidatesTokenCount },
      modelVersion: "gemini-2.5-pro",
    });
    if (!stream) {
      return {
        contentType: "application/json",
        chunks: [
          JSON.stringify(part("hello from gemini", { promptTokenCount: 4000, candidatesTokenCount: 800 })),
        ],
      };
    }
    return {
      contentType: "text/event-stream",
      chunks: [
        sse(part("hello ", { promptTokenCount: 4000, candidatesTokenCount: 2 })),
        sse(part("from gemini", { promptTokenCount: 4000, candidatesTokenCount: 800 })),
      ],
    };
  }
  return {
    status: 404,
    contentType: "application/json",
    chunks: [JSON.stringify({ error: { message: `fake: no ${url}` } })],
  };
}

/** A provider stand-in on loopback that remembers every request it gets. */
export class FakeUpstream implements AsyncDisposable {
  readonly requests: SeenRequest[] = [];
  reply: (url: string, body: string) => FakeReply = providerReply;

  private constructor(
    private readonly server: Server,
    readonly url: string,
    readonly host: string,
  ) {}

  static async start(): Promise<FakeUpstream> {
    const holder: { self?: FakeUpstream } = {};
    const server = createServer((request, response) => {
      const parts: Buffer[] = [];
      request.on("data", (chunk: Buffer) => parts.push(chunk));
      request.on("end", () => {
        void (async () => {
          const body = Buffer.concat(parts).toString("utf8");
          holder.self?.requests.push({
            method: request.method ?? "",
            url: request.url ?? "",
            headers: request.headers,
            body,
          });
          const reply = (holder.self?.reply ?? providerReply)(request.url ?? "", body);
          response.writeHead(reply.status ?? 200, { "content-type": reply.contentType });
          const last = reply.chunks.length - 1;
          for (const [index, chunk] of reply.chunks.entries()) {
            if (index === last && reply.beforeLast) await reply.beforeLast;
            response.write(chunk);
          }
          response.end();
        })();
      });
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const { port } = server.address() as AddressInfo;
    holder.self = new FakeUpstream(server, `http://127.0.0.1:${port}`, `127.0.0.1:${port}`);
    return holder.self;
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }
}
