import { describe, expect, it } from "vitest";
import type { ExchangeEvent } from "../../../src/gateway/gateway.js";
import { FakeUpstream, providerReply } from "./fake-upstream.js";
import { startGateway, tempDir } from "./gateway-fixture.js";
import { send, sseData } from "./http-client.js";

const openaiChat = (stream: boolean) => ({
  path: "/openai/v1/chat/completions",
  body: { model: "gpt-4o", stream, messages: [{ role: "user", content: "hi" }] },
});
const anthropicMessages = (stream: boolean) => ({
  path: "/anthropic/v1/messages",
  body: { model: "claude-sonnet-4-5", max_tokens: 100, stream, messages: [{ role: "user", content: "hi" }] },
});
const geminiGenerate = (stream: boolean) => ({
  path: stream
    ? "/gemini/v1beta/models/gemini-2.5-pro:streamGenerateContent?alt=sse"
    : "/gemini/v1beta/models/gemini-2.5-pro:generateContent",
  body: { contents: [{ role: "user", parts: [{ text: "hi" }] }] },
});

describe("LlmGateway usage accounting", () => {
  const cases = [
    // gpt-4o: $2.50 / $10 per million tokens; the fake reports 1200 in, 300 out.
    {
      name: "OpenAI",
      stream: false,
      call: openaiChat(false),
      tokens: [1200, 300],
      cost: 0.006,
      model: "gpt-4o",
    },
    {
      name: "OpenAI",
      stream: true,
      call: openaiChat(true),
      tokens: [1200, 300],
      cost: 0.006,
      model: "gpt-4o",
    },
    // claude-sonnet-4-5: $3 / $15; 2000 + 500 cache read in, 100 out (250 streamed).
    {
      name: "Anthropic",
      stream: false,
      call: anthropicMessages(false),
      tokens: [2500, 100],
      cost: 0.009,
      model: "claude-sonnet-4-5",
    },
    {
      name: "Anthropic",
      stream: true,
      call: anthropicMessages(true),
      tokens: [2000, 250],
      cost: 0.00975,
      model: "claude-sonnet-4-5",
    },
    // gemini-2.5-pro: $1.25 / $10; 4000 in, 800 out (cumulative in the stream).
    {
      name: "Gemini",
      stream: false,
      call: geminiGenerate(false),
      tokens: [4000, 800],
      cost: 0.013,
      model: "gemini-2.5-pro",
    },
    {
      name: "Gemini",
      stream: true,
      call: geminiGenerate(true),
      tokens: [4000, 800],
      cost: 0.013,
      model: "gemini-2.5-pro",
    },
  ];
  for (const c of cases) {
    it(`counts ${c.name}'s ${c.stream ? "streamed" : "whole"} usage and cost`, async () => {
      using dir = tempDir();
      await using upstream = await FakeUpstream.start();
      await using gateway = await startGateway(dir.path, upstream);
      const events: ExchangeEvent[] = [];
      gateway.onExchange((event) => events.push(event));
      const reply = await send({ socketPath: gateway.address }, c.call);
      expect(reply.status).toBe(200);
      expect(reply.headers["content-type"]).toContain(c.stream ? "text/event-stream" : "application/json");
      const totals = gateway.usage();
      expect(totals).toMatchObject({
        requests: 1,
        inputTokens: c.tokens[0],
        outputTokens: c.tokens[1],
        refused: 0,
      });
      expect(totals.costUsd).toBeCloseTo(c.cost, 9);
      expect(totals.byModel[c.model]).toMatchObject({ requests: 1, inputTokens: c.tokens[0] });
      expect(events).toHaveLength(1);
      expect(events[0]).toMatchObject({
        model: c.model,
        status: 200,
        source: "upstream",
        streamed: c.stream,
        inputTokens: c.tokens[0],
        outputTokens: c.tokens[1],
        usageEstimated: false,
      });
    });
  }

  it("asks an OpenAI stream for its usage and passes the stream through unchanged otherwise", async () => {
    using dir = tempDir();
    await using upstream = await FakeUpstream.start();
    await using gateway = await startGateway(dir.path, upstream);
    const reply = await send({ socketPath: gateway.address }, openaiChat(true));
    expect(JSON.parse(upstream.requests[0]?.body ?? "{}").stream_options).toEqual({ include_usage: true });
    const expected = providerReply("/v1/chat/completions", upstream.requests[0]?.body ?? "").chunks.join("");
    expect(reply.body).toBe(expected);
    expect(sseData(reply.body).at(-1)).toBe("[DONE]");
  });

  it("streams each chunk to the client as it arrives, before the upstream has finished", async () => {
    using dir = tempDir();
    await using upstream = await FakeUpstream.start();
    let release: () => void = () => undefined;
    const held = new Promise<void>((resolve) => (release = resolve));
    upstream.reply = (url, body) => ({ ...providerReply(url, body), beforeLast: held });
    await using gateway = await startGateway(dir.path, upstream);
    let firstChunk: (text: string) => void = () => undefined;
    const sawFirst = new Promise<string>((resolve) => (firstChunk = resolve));
    const pending = send(
      { socketPath: gateway.address },
      { ...openaiChat(true), onChunk: (chunk) => firstChunk(chunk) },
    );
    // The upstream holds back its last chunk until the client has seen the first one.
    expect(await sawFirst).toContain("hello ");
    release();
    const reply = await pending;
    expect(sseData(reply.body).at(-1)).toBe("[DONE]");
  });

  it("estimates input tokens when a response reports none, and says so", async () => {
    using dir = tempDir();
    await using upstream = await FakeUpstream.start();
    upstream.reply = () => ({ contentType: "application/json", chunks: ['{"choices":[]}'] });
    await using gateway = await startGateway(dir.path, upstream);
    const events: ExchangeEvent[] = [];
    gateway.onExchange((event) => events.push(event));
    await send({ socketPath: gateway.address }, openaiChat(false));
    expect(events[0]).toMatchObject({ usageEstimated: true, outputTokens: 0 });
    expect(events[0]?.inputTokens).toBeGreaterThan(0);
  });

  it("counts no tokens for an error answer that reports none", async () => {
    using dir = tempDir();
    await using upstream = await FakeUpstream.start();
    upstream.reply = () => ({
      status: 404,
      contentType: "application/json",
      chunks: ['{"error":{"message":"no such model"}}'],
    });
    await using gateway = await startGateway(dir.path, upstream);
    const reply = await send({ socketPath: gateway.address }, openaiChat(false));
    expect(reply.status).toBe(404);
    expect(JSON.parse(reply.body).error.message).toBe("no such model");
    expect(gateway.usage()).toMatchObject({ requests: 1, inputTokens: 0, outputTokens: 0, costUsd: 0 });
  });

  it("counts the offline model's usage at no cost", async () => {
    using dir = tempDir();
    await using gateway = await startGateway(dir.path, undefined, { keys: {} });
    await send(
      { socketPath: gateway.address },
      {
        path: "/offline/v1/chat/completions",
        body: { model: "drydock-offline", stream: true, messages: [{ role: "user", content: "fix greet" }] },
      },
    );
    const totals = gateway.usage();
    expect(totals.requests).toBe(1);
    expect(totals.inputTokens).toBeGreaterThan(0);
    expect(totals.outputTokens).toBeGreaterThan(10);
    expect(totals.costUsd).toBe(0);
    expect(totals.unpricedModels).toEqual([]);
  });

  it("lists models without a price and takes prices from the options", async () => {
    using dir = tempDir();
    await using upstream = await FakeUpstream.start();
    await using gateway = await startGateway(dir.path, upstream, {
      prices: { "my-model": { inputPerMTok: 1000, outputPerMTok: 0 } },
    });
    const call = (model: string) =>
      send(
        { socketPath: gateway.address },
        { path: "/openai/v1/chat/completions", body: { model, messages: [{ role: "user", content: "x" }] } },
      );
    await call("mystery-model");
    await call("my-model-2");
    const totals = gateway.usage();
    expect(totals.unpricedModels).toEqual(["mystery-model"]);
    expect(totals.byModel["my-model-2"]?.costUsd).toBeCloseTo(1.2, 9);
  });
});

describe("LlmGateway limits", () => {
  it("refuses the call past --max-llm-requests with a message naming the flag", async () => {
    using dir = tempDir();
    await using upstream = await FakeUpstream.start();
    await using gateway = await startGateway(dir.path, upstream, { limits: { maxRequests: 2 } });
    const events: ExchangeEvent[] = [];
    gateway.onExchange((event) => events.push(event));
    expect((await send({ socketPath: gateway.address }, openaiChat(false))).status).toBe(200);
    expect((await send({ socketPath: gateway.address }, openaiChat(true))).status).toBe(200);
    const third = await send({ socketPath: gateway.address }, openaiChat(false));
    expect(third.status).toBe(400);
    const error = JSON.parse(third.body).error;
    expect(error.code).toBe("limit_exceeded");
    expect(error.message).toContain("made 2 of the 2 model calls allowed by --max-llm-requests");
    expect(upstream.requests).toHaveLength(2);
    expect(gateway.usage()).toMatchObject({ requests: 2, refused: 1 });
    expect(events.at(-1)?.refusal?.code).toBe("limit_exceeded");
  });

  it("refuses calls once --max-llm-cost-usd is spent, in Anthropic's error shape for Anthropic", async () => {
    using dir = tempDir();
    await using upstream = await FakeUpstream.start();
    await using gateway = await startGateway(dir.path, upstream, { limits: { maxCostUsd: 0.01 } });
    // Each call costs $0.009: the first leaves $0.001, the second crosses the limit, the third is refused.
    expect((await send({ socketPath: gateway.address }, anthropicMessages(false))).status).toBe(200);
    expect((await send({ socketPath: gateway.address }, anthropicMessages(false))).status).toBe(200);
    const third = await send({ socketPath: gateway.address }, anthropicMessages(false));
    expect(third.status).toBe(400);
    const body = JSON.parse(third.body);
    expect(body.type).toBe("error");
    expect(body.error.message).toMatch(/spent \$0\.0180 of the \$0\.01 allowed by --max-llm-cost-usd/);
    expect(upstream.requests).toHaveLength(2);
  });

  it("does not count a call whose upstream could not be reached", async () => {
    using dir = tempDir();
    const upstream = await FakeUpstream.start();
    await using gateway = await startGateway(dir.path, upstream, { limits: { maxRequests: 1 } });
    await upstream.close();
    const reply = await send({ socketPath: gateway.address }, openaiChat(false));
    expect(reply.status).toBe(502);
    expect(JSON.parse(reply.body).error.code).toBe("upstream_unreachable");
    expect(gateway.usage()).toMatchObject({ requests: 0, refused: 1 });
  });
});
