import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { ExchangeEvent } from "../../../src/gateway/gateway.js";
import { exchangeKey, normalizeRequestBody, ReplayBook } from "../../../src/gateway/record-replay.js";
import { FakeUpstream } from "./fake-upstream.js";
import { startGateway, tempDir } from "./gateway-fixture.js";
import { send } from "./http-client.js";

const calls = [
  {
    path: "/openai/v1/chat/completions",
    body: { model: "gpt-4o", stream: true, messages: [{ role: "user", content: "stream me" }] },
  },
  {
    path: "/openai/v1/chat/completions",
    body: { model: "gpt-4o", messages: [{ role: "user", content: "whole" }] },
  },
  {
    path: "/anthropic/v1/messages",
    body: {
      model: "claude-sonnet-4-5",
      stream: true,
      max_tokens: 5,
      messages: [{ role: "user", content: "a" }],
    },
  },
  {
    path: "/gemini/v1beta/models/gemini-2.5-pro:streamGenerateContent?alt=sse",
    body: { contents: [{ role: "user", parts: [{ text: "g" }] }] },
  },
  {
    path: "/offline/v1/chat/completions",
    body: { model: "drydock-offline", messages: [{ role: "user", content: "fix greet" }] },
  },
];

describe("record and replay", () => {
  it("replays every recorded exchange byte for byte with the upstream stopped", async () => {
    using dir = tempDir();
    const file = join(dir.path, "exchanges.jsonl");
    const upstream = await FakeUpstream.start();
    const recorded: string[] = [];
    const recordedUsage = await (async () => {
      await using gateway = await startGateway(dir.path, upstream, { mode: { kind: "record", file } });
      for (const call of calls) {
        const reply = await send({ socketPath: gateway.address }, call);
        expect(reply.status).toBe(200);
        recorded.push(reply.body);
      }
      return gateway.usage();
    })();
    await upstream.close();
    const lines = readFileSync(file, "utf8").trim().split("\n");
    expect(lines).toHaveLength(calls.length);
    expect(JSON.parse(lines[0] ?? "{}")).toMatchObject({
      v: 1,
      provider: "openai",
      streamed: true,
      status: 200,
    });

    await using replay = await startGateway(dir.path, upstream, { mode: { kind: "replay", file }, keys: {} });
    const events: ExchangeEvent[] = [];
    replay.onExchange((event) => events.push(event));
    for (const [index, call] of calls.entries()) {
      const reply = await send({ socketPath: replay.address }, call);
      expect(reply.status).toBe(200);
      expect(reply.headers["x-drydock-source"]).toBe("replay");
      expect(reply.body).toBe(recorded[index]);
    }
    expect(events.every((event) => event.source === "replay")).toBe(true);
    const replayed = replay.usage();
    expect(replayed).toMatchObject({
      requests: recordedUsage.requests,
      inputTokens: recordedUsage.inputTokens,
      outputTokens: recordedUsage.outputTokens,
    });
    expect(replayed.costUsd).toBeCloseTo(recordedUsage.costUsd, 12);
  });

  it("answers a request the file has no answer for with an error naming the file and the request", async () => {
    using dir = tempDir();
    const file = join(dir.path, "empty.jsonl");
    writeFileSync(file, "");
    await using gateway = await startGateway(dir.path, undefined, { mode: { kind: "replay", file } });
    const reply = await send(
      { socketPath: gateway.address },
      {
        path: "/openai/v1/chat/completions",
        body: { model: "gpt-4o", messages: [{ role: "user", content: "Rename the   function\nplease" }] },
      },
    );
    expect(reply.status).toBe(400);
    const error = JSON.parse(reply.body).error;
    expect(error.code).toBe("replay_miss");
    expect(error.message).toContain(`no recorded answer in ${file}`);
    expect(error.message).toContain(
      'openai POST /v1/chat/completions, model gpt-4o, last user message "Rename the function please"',
    );
    expect(error.message).toContain(`--llm record:${file}`);
  });

  it("answers a request recorded twice with each recorded answer in turn, then the last again", async () => {
    using dir = tempDir();
    const file = join(dir.path, "twice.jsonl");
    const body = JSON.stringify({ model: "m", messages: [{ role: "user", content: "same" }] });
    const key = exchangeKey("openai", "POST", "/v1/chat/completions", body);
    const line = (answer: string) =>
      JSON.stringify({
        v: 1,
        key,
        provider: "openai",
        method: "POST",
        path: "/v1/chat/completions",
        request: {},
        status: 200,
        contentType: "application/json",
        streamed: false,
        body: answer,
        recordedAt: "",
      });
    writeFileSync(file, [line('{"n":1}'), line('{"n":2}')].join("\n") + "\n");
    const book = ReplayBook.load(file);
    expect(book.size).toBe(2);
    expect([book.take(key)?.body, book.take(key)?.body, book.take(key)?.body]).toEqual([
      '{"n":1}',
      '{"n":2}',
      '{"n":2}',
    ]);
  });

  it("says which line of a replay file is broken, and what to do when the file is missing", () => {
    using dir = tempDir();
    const file = join(dir.path, "broken.jsonl");
    writeFileSync(file, '{"key":"k","body":"b"}\nnot json\n');
    expect(() => ReplayBook.load(file)).toThrow(`${file}:2 is not JSON`);
    expect(() => ReplayBook.load(join(dir.path, "missing.jsonl"))).toThrow(
      /does not exist; make one with --llm record:/,
    );
  });
});

describe("exchangeKey", () => {
  const request = (
    extra: Record<string, unknown>,
    system = "- Current date: 2025-01-02\n- Platform: Linux-6.1",
  ) =>
    JSON.stringify({
      model: "gpt-4o",
      messages: [
        { role: "system", content: `Act as an expert.\n${system}\n` },
        { role: "user", content: "fix it" },
      ],
      ...extra,
    });

  it("ignores key order, volatile fields, and aider's date and platform lines", () => {
    const a = exchangeKey("openai", "POST", "/v1/chat/completions", request({ temperature: 0 }));
    const b = exchangeKey(
      "openai",
      "post",
      "/v1/chat/completions",
      JSON.stringify({
        temperature: 0,
        ...JSON.parse(
          request(
            { user: "u1", stream_options: { include_usage: true } },
            "- Current date: 2030-12-31\n- Platform: macOS-14-arm64",
          ),
        ),
      }),
    );
    expect(b).toBe(a);
  });

  it("tells apart requests that differ in what is asked, where, or of whom", () => {
    const base = exchangeKey("openai", "POST", "/v1/chat/completions", request({}));
    expect(exchangeKey("openai", "POST", "/v1/chat/completions", request({ temperature: 1 }))).not.toBe(base);
    expect(exchangeKey("offline", "POST", "/v1/chat/completions", request({}))).not.toBe(base);
    expect(exchangeKey("openai", "POST", "/v1/responses", request({}))).not.toBe(base);
    expect(exchangeKey("openai", "POST", "/v1/chat/completions", request({}, "- Shell: /bin/zsh"))).not.toBe(
      base,
    );
  });

  it("drops credentials from the query and keeps the rest", () => {
    expect(exchangeKey("gemini", "POST", "/m:stream?key=secret1&alt=sse", "{}")).toBe(
      exchangeKey("gemini", "POST", "/m:stream?alt=sse&key=other", "{}"),
    );
    expect(exchangeKey("gemini", "POST", "/m:stream?alt=sse", "{}")).not.toBe(
      exchangeKey("gemini", "POST", "/m:stream", "{}"),
    );
  });

  it("keeps a body that is not JSON as it is", () => {
    expect(normalizeRequestBody("plain text")).toBe("plain text");
  });
});
