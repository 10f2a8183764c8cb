import { describe, expect, it } from "vitest";
import { costUsd, priceOf } from "../../../src/gateway/prices.js";
import { SseReader } from "../../../src/gateway/sse.js";
import { UsageMeter } from "../../../src/gateway/usage-meter.js";
import { UsageLedger } from "../../../src/gateway/usage-ledger.js";

describe("SseReader", () => {
  it("returns each event's data once the event is complete, wherever the chunks split", () => {
    const text = 'event: a\ndata: {"x":1}\n\ndata: line1\ndata: line2\r\n\r\n: comment\n\ndata: [DONE]\n\n';
    for (let size = 1; size <= text.length; size += 1) {
      const reader = new SseReader();
      const events: string[] = [];
      for (let i = 0; i < text.length; i += size) events.push(...reader.push(text.slice(i, i + size)));
      events.push(...reader.flush());
      expect(events).toEqual(['{"x":1}', "line1\nline2", "[DONE]"]);
    }
  });
});

describe("UsageMeter", () => {
  it("reads a whole OpenAI body split across chunks", () => {
    const meter = new UsageMeter("application/json");
    const body = JSON.stringify({
      model: "gpt-4o-2024-08-06",
      usage: { prompt_tokens: 10, completion_tokens: 5 },
    });
    meter.push(body.slice(0, 7));
    meter.push(body.slice(7));
    expect(meter.finish()).toEqual({ inputTokens: 10, outputTokens: 5, model: "gpt-4o-2024-08-06" });
  });

  it("keeps Anthropic's input from message_start and the cumulative output of message_delta", () => {
    const meter = new UsageMeter("text/event-stream");
    meter.push(
      `data: ${JSON.stringify({ type: "message_start", message: { model: "claude-x", usage: { input_tokens: 7, cache_creation_input_tokens: 3, output_tokens: 1 } } })}\n\n`,
    );
    meter.push(`data: ${JSON.stringify({ type: "message_delta", usage: { output_tokens: 42 } })}\n\n`);
    expect(meter.finish()).toEqual({ inputTokens: 10, outputTokens: 42, model: "claude-x" });
  });

  it("counts Gemini's thinking tokens as output and reads a JSON array of chunks", () => {
    const meter = new UsageMeter("application/json; charset=UTF-8");
    meter.push(
      JSON.stringify([
        { usageMetadata: { promptTokenCount: 5, candidatesTokenCount: 1 } },
        {
          usageMetadata: { promptTokenCount: 5, candidatesTokenCount: 9, thoughtsTokenCount: 20 },
          modelVersion: "gemini-2.5-pro",
        },
      ]),
    );
    expect(meter.finish()).toEqual({ inputTokens: 5, outputTokens: 29, model: "gemini-2.5-pro" });
  });

  it("reads OpenAI Responses API stream events", () => {
    const meter = new UsageMeter("text/event-stream");
    meter.push(
      `event: response.completed\ndata: ${JSON.stringify({ type: "response.completed", response: { model: "gpt-5", usage: { input_tokens: 3, output_tokens: 4 } } })}\n\n`,
    );
    expect(meter.finish()).toEqual({ inputTokens: 3, outputTokens: 4, model: "gpt-5" });
  });

  it("reports nothing for a body without usage", () => {
    const meter = new UsageMeter("text/event-stream");
    meter.push("data: [DONE]\n\n");
    expect(meter.finish()).toEqual({});
  });
});

describe("prices", () => {
  it("takes the longest prefix that fits and ignores provider prefixes", () => {
    expect(priceOf("openai/gpt-4o-mini-2024-07-18")).toEqual({ inputPerMTok: 0.15, outputPerMTok: 0.6 });
    expect(priceOf("gpt-4o-2024-08-06")).toEqual({ inputPerMTok: 2.5, outputPerMTok: 10 });
    expect(priceOf("models/gemini-2.5-flash-lite")?.inputPerMTok).toBe(0.1);
    expect(priceOf("llama-3")).toBeUndefined();
    expect(costUsd("claude-sonnet-4-5", { inputTokens: 1_000_000, outputTokens: 100_000 })).toBeCloseTo(
      4.5,
      9,
    );
  });
});

describe("UsageLedger", () => {
  it("counts admitted calls at once, so concurrent calls cannot pass maxRequests together", () => {
    const ledger = new UsageLedger({ maxRequests: 2 });
    ledger.admit();
    ledger.admit();
    expect(() => ledger.admit()).toThrow(/--max-llm-requests/);
    ledger.cancel();
    expect(() => ledger.admit()).not.toThrow();
  });
});
