/**
 * What a model call may carry. A provider fetches any URL a message names (an image or document
 * "by URL") and reads any file stored in the operator's account that a message names by id, so a
 * message could send the repository to an address of the box's choosing or read what the account
 * holds; search models search the web with no tool declared; and request headers such as
 * `OpenAI-Organization`, `OpenAI-Project` and `anthropic-beta` choose what the operator's key bills
 * and enables. The gateway carries text, images inline and size-capped, and a short list of
 * headers; everything else is refused before it reaches the provider, with the field to fix.
 */
import { describe, expect, it } from "vitest";
import { FakeUpstream, providerReply } from "../unit/gateway/fake-upstream.js";
import { startGateway, tempDir } from "../unit/gateway/gateway-fixture.js";
import { send } from "../unit/gateway/http-client.js";

const MiB = 1024 * 1024;
const PNG = Buffer.from("89504e470d0a1a0a0000000d49484452", "hex").toString("base64");
const dataUrl = (bytes: number, type = "image/png") =>
  `data:${type};base64,${Buffer.alloc(bytes, 7).toString("base64")}`;

const CHAT = "/openai/v1/chat/completions";
const MESSAGES = "/anthropic/v1/messages";
const GENERATE = "/gemini/v1beta/models/gemini-2.5-pro:generateContent";

const userParts = (...parts: unknown[]) => ({
  model: "gpt-4o",
  messages: [{ role: "user", content: [{ type: "text", text: "what is in the picture?" }, ...parts] }],
});
const claudeParts = (...parts: unknown[]) => ({
  model: "claude-sonnet-4-5",
  max_tokens: 10,
  messages: [{ role: "user", content: [{ type: "text", text: "what is in it?" }, ...parts] }],
});
const geminiParts = (...parts: unknown[]) => ({
  contents: [{ role: "user", parts: [{ text: "what is in it?" }, ...parts] }],
});
const claudeImage = (source: unknown) => ({ type: "image", source });

/** [what, path, body, the field the refusal must name]: each is refused and never reaches the provider. */
const REFUSED: Array<[string, string, unknown, string]> = [
  [
    "an OpenAI image by https URL",
    CHAT,
    userParts({ type: "image_url", image_url: { url: "https://evil.example/leak?repo=secret" } }),
    "messages[0].content[1].image_url.url: URL references are refused; send the image inline as a data: URL",
  ],
  [
    "an OpenAI image by http URL",
    CHAT,
    userParts({ type: "image_url", image_url: { url: "http://evil.example/a.png" } }),
    "messages[0].content[1].image_url.url: URL references are refused",
  ],
  [
    "an OpenAI image_url given as a bare string",
    CHAT,
    userParts({ type: "image_url", image_url: "https://evil.example/a.png" }),
    "messages[0].content[1].image_url",
  ],
  [
    "an OpenAI data: URL that is not an image",
    CHAT,
    userParts({ type: "image_url", image_url: { url: dataUrl(10, "text/html") } }),
    "messages[0].content[1].image_url.url",
  ],
  [
    "an OpenAI data: URL that is not base64",
    CHAT,
    userParts({ type: "image_url", image_url: { url: "data:image/png,rawbytes" } }),
    "messages[0].content[1].image_url.url",
  ],
  [
    "an OpenAI image larger than the per-image cap",
    CHAT,
    userParts({ type: "image_url", image_url: { url: dataUrl(5 * MiB + 1) } }),
    "messages[0].content[1].image_url.url: the inline image is 5242881 bytes",
  ],
  [
    "OpenAI images larger than the per-request cap together",
    CHAT,
    userParts(
      ...Array.from({ length: 5 }, () => ({
        type: "image_url",
        image_url: { url: dataUrl(4 * MiB + 256 * 1024) },
      })),
    ),
    "messages[0].content[5].image_url.url: the request's inline images come to",
  ],
  [
    "an OpenAI stored file by id",
    CHAT,
    userParts({ type: "file", file: { file_id: "file-abc123" } }),
    "messages[0].content[1].type: file parts are refused",
  ],
  [
    "an OpenAI file inline",
    CHAT,
    userParts({ type: "file", file: { filename: "a.pdf", file_data: dataUrl(10, "application/pdf") } }),
    "messages[0].content[1].type: file parts are refused",
  ],
  [
    "a Responses-API input_file part in chat",
    CHAT,
    userParts({ type: "input_file", file_url: "https://evil.example/a.pdf" }),
    "messages[0].content[1].type: input_file parts are refused",
  ],
  [
    "a Responses-API input_image part in chat",
    CHAT,
    userParts({ type: "input_image", image_url: "https://evil.example/a.png" }),
    "messages[0].content[1].type: input_image parts are refused",
  ],
  [
    "an OpenAI part of unknown type",
    CHAT,
    userParts({ type: "video_url", video_url: { url: "https://evil.example/v.mp4" } }),
    "messages[0].content[1].type: video_url parts are refused",
  ],
  [
    "an OpenAI search model",
    CHAT,
    { model: "gpt-4o-search-preview", messages: [{ role: "user", content: "hi" }] },
    "model: gpt-4o-search-preview searches the web",
  ],
  [
    "an OpenAI mini search model",
    CHAT,
    { model: "gpt-4o-mini-search-preview-2025-03-11", messages: [{ role: "user", content: "hi" }] },
    "model: gpt-4o-mini-search-preview-2025-03-11 searches the web",
  ],
  [
    "an OpenAI search model through legacy completions",
    "/openai/v1/completions",
    { model: "gpt-5-search-api", prompt: "hi" },
    "model: gpt-5-search-api searches the web",
  ],
  [
    "an OpenAI deep-research model",
    CHAT,
    { model: "o4-mini-deep-research", messages: [{ role: "user", content: "hi" }] },
    "model: o4-mini-deep-research searches the web",
  ],
  [
    "an Anthropic image by URL",
    MESSAGES,
    claudeParts(claudeImage({ type: "url", url: "https://evil.example/a.png" })),
    "messages[0].content[1].source.type: url sources are refused; send the image inline as a base64 source",
  ],
  [
    "an Anthropic image by stored file",
    MESSAGES,
    claudeParts(claudeImage({ type: "file", file_id: "file_011abc" })),
    "messages[0].content[1].source.type: file sources are refused",
  ],
  [
    "an Anthropic document by URL",
    MESSAGES,
    claudeParts({ type: "document", source: { type: "url", url: "https://evil.example/a.pdf" } }),
    "messages[0].content[1].type: document blocks are refused",
  ],
  [
    "an Anthropic document by stored file",
    MESSAGES,
    claudeParts({ type: "document", source: { type: "file", file_id: "file_011abc" } }),
    "messages[0].content[1].type: document blocks are refused",
  ],
  [
    "an Anthropic image larger than the per-image cap",
    MESSAGES,
    claudeParts(
      claudeImage({
        type: "base64",
        media_type: "image/png",
        data: Buffer.alloc(5 * MiB + 1).toString("base64"),
      }),
    ),
    "messages[0].content[1].source.data: the inline image is 5242881 bytes",
  ],
  [
    "an Anthropic image by URL inside a tool result",
    MESSAGES,
    {
      model: "claude-sonnet-4-5",
      max_tokens: 10,
      messages: [
        { role: "user", content: "look" },
        { role: "assistant", content: [{ type: "tool_use", id: "t1", name: "shot", input: {} }] },
        {
          role: "user",
          content: [
            {
              type: "tool_result",
              tool_use_id: "t1",
              content: [claudeImage({ type: "url", url: "https://evil.example/a.png" })],
            },
          ],
        },
      ],
    },
    "messages[2].content[0].content[0].source.type: url sources are refused",
  ],
  [
    "an Anthropic system prompt with an image by URL",
    MESSAGES,
    { ...claudeParts(), system: [claudeImage({ type: "url", url: "https://evil.example/a.png" })] },
    "system[0].type: image blocks are refused in the system prompt",
  ],
  [
    "an Anthropic file uploaded to the code container",
    MESSAGES,
    claudeParts({ type: "container_upload", file_id: "file_011abc" }),
    "messages[0].content[1].type: container_upload blocks are refused",
  ],
  [
    "an Anthropic token count with an image by URL",
    "/anthropic/v1/messages/count_tokens",
    claudeParts(claudeImage({ type: "url", url: "https://evil.example/a.png" })),
    "messages[0].content[1].source.type: url sources are refused",
  ],
  [
    "an Anthropic server tool the provider added after web search and fetch",
    MESSAGES,
    { ...claudeParts(), tools: [{ type: "tool_search_tool_regex_20251119", name: "tool_search" }] },
    "tools[0].type: the request asks for the provider's server-side tool tool_search_tool_regex_20251119",
  ],
  [
    "a Gemini file by URI",
    GENERATE,
    geminiParts({ fileData: { mimeType: "image/png", fileUri: "https://evil.example/a.png" } }),
    "contents[0].parts[1].fileData: file references are refused; send the image inline as inlineData",
  ],
  [
    "a Gemini file by URI, snake case",
    GENERATE,
    geminiParts({ file_data: { mime_type: "application/pdf", file_uri: "https://evil.example/a.pdf" } }),
    "contents[0].parts[1].file_data: file references are refused",
  ],
  [
    "a Gemini file by URI in a function response",
    GENERATE,
    {
      contents: [
        { role: "user", parts: [{ text: "look" }] },
        { role: "model", parts: [{ functionCall: { name: "shot", args: {} } }] },
        {
          role: "user",
          parts: [
            {
              functionResponse: {
                name: "shot",
                response: {},
                parts: [{ fileData: { mimeType: "image/png", fileUri: "https://evil.example/a.png" } }],
              },
            },
          ],
        },
      ],
    },
    "contents[2].parts[0].functionResponse.parts[0].fileData: file references are refused",
  ],
  [
    "a Gemini system instruction with a file by URI",
    GENERATE,
    {
      ...geminiParts(),
      systemInstruction: { parts: [{ fileData: { fileUri: "https://evil.example/a.txt" } }] },
    },
    "systemInstruction.parts[0].fileData: file references are refused",
  ],
  [
    "a Gemini inline part that is not an image",
    GENERATE,
    geminiParts({ inlineData: { mimeType: "application/pdf", data: PNG } }),
    "contents[0].parts[1].inlineData.mimeType: application/pdf is refused",
  ],
  [
    "a Gemini token count of a whole request with a file by URI",
    "/gemini/v1beta/models/gemini-2.5-pro:countTokens",
    {
      generateContentRequest: {
        model: "models/gemini-2.5-pro",
        ...geminiParts({ fileData: { fileUri: "https://evil.example/a.png" } }),
      },
    },
    "generateContentRequest.contents[0].parts[1].fileData: file references are refused",
  ],
  [
    "Gemini content cached in the account",
    GENERATE,
    { ...geminiParts(), cachedContent: "cachedContents/abc123" },
    "cachedContent: content cached in the provider account is refused",
  ],
];

/** Inline images and text as aider (through litellm) sends them: each reaches the provider as sent. */
const ALLOWED: Array<[string, string, Record<string, unknown>]> = [
  [
    "an OpenAI image inline",
    CHAT,
    userParts({ type: "image_url", image_url: { url: `data:image/png;base64,${PNG}`, detail: "low" } }),
  ],
  [
    "an OpenAI image of exactly the per-image cap",
    CHAT,
    userParts({ type: "image_url", image_url: { url: dataUrl(5 * MiB, "image/jpeg") } }),
  ],
  [
    "OpenAI text, assistant and tool messages",
    CHAT,
    {
      model: "gpt-4o",
      messages: [
        { role: "system", content: [{ type: "text", text: "be brief" }] },
        { role: "user", content: "hi" },
        {
          role: "assistant",
          content: null,
          tool_calls: [{ id: "c1", type: "function", function: { name: "f", arguments: "{}" } }],
        },
        { role: "tool", tool_call_id: "c1", content: [{ type: "text", text: "done" }] },
        { role: "assistant", content: [{ type: "refusal", refusal: "no" }] },
      ],
    },
  ],
  [
    "an Anthropic image inline, in a message and in a tool result",
    MESSAGES,
    {
      model: "claude-sonnet-4-5",
      max_tokens: 10,
      system: [{ type: "text", text: "be brief", cache_control: { type: "ephemeral" } }],
      messages: [
        {
          role: "user",
          content: [
            { type: "text", text: "what is in it?" },
            claudeImage({ type: "base64", media_type: "image/png", data: PNG }),
          ],
        },
        {
          role: "assistant",
          content: [
            { type: "thinking", thinking: "hmm", signature: "sig" },
            { type: "tool_use", id: "t1", name: "shot", input: { url: "https://example.com" } },
          ],
        },
        {
          role: "user",
          content: [
            {
              type: "tool_result",
              tool_use_id: "t1",
              content: [
                { type: "text", text: "here" },
                claudeImage({ type: "base64", media_type: "image/webp", data: PNG }),
              ],
            },
          ],
        },
      ],
    },
  ],
  ["a Gemini image inline", GENERATE, geminiParts({ inlineData: { mimeType: "image/png", data: PNG } })],
  [
    "a Gemini image inline, snake case, with a function call and response",
    GENERATE,
    {
      systemInstruction: { parts: [{ text: "be brief" }] },
      contents: [
        { role: "user", parts: [{ text: "look" }, { inline_data: { mime_type: "image/jpeg", data: PNG } }] },
        { role: "model", parts: [{ functionCall: { name: "shot", args: { a: 1 } }, thoughtSignature: "x" }] },
        { role: "user", parts: [{ functionResponse: { name: "shot", response: { ok: true } } }] },
      ],
    },
  ],
];

function refusalMessage(provider: string, body: string): { message: string; code: unknown } {
  const parsed = JSON.parse(body) as { error: { message: string; code: unknown; reason?: unknown } };
  return {
    message: parsed.error.message,
    code: provider === "gemini" ? parsed.error.reason : parsed.error.code,
  };
}

describe("what a model call may carry through the gateway", () => {
  it("refuses URL and file references, unknown parts, oversized images and search models before the provider", async () => {
    using dir = tempDir();
    await using upstream = await FakeUpstream.start();
    await using gateway = await startGateway(dir.path, upstream);
    for (const [what, path, body, field] of REFUSED) {
      const reply = await send({ socketPath: gateway.address }, { path, body });
      expect(reply.status, what).toBe(400);
      const provider = path.split("/")[1] ?? "";
      const { message, code } = refusalMessage(provider, reply.body);
      expect(message, what).toContain(`drydock gateway: ${field}`);
      expect(code, what).toBe("call_not_allowed");
    }
    expect(upstream.requests).toEqual([]);
    expect(gateway.usage()).toMatchObject({ requests: 0, refused: REFUSED.length });
  });

  it("carries text and inline images to the provider exactly as sent", async () => {
    using dir = tempDir();
    await using upstream = await FakeUpstream.start();
    await using gateway = await startGateway(dir.path, upstream);
    for (const [what, path, body] of ALLOWED) {
      const reply = await send({ socketPath: gateway.address }, { path, body });
      expect(reply.status, what).toBe(200);
      const seen = upstream.requests.at(-1);
      expect(seen?.url, what).toBe(path.replace(/^\/[a-z]+/, ""));
      expect(JSON.parse(seen?.body ?? "null"), what).toEqual(body);
    }
    expect(upstream.requests).toHaveLength(ALLOWED.length);
  });

  it("checks the body it forwards: what the provider parses is what the gateway checked", async () => {
    using dir = tempDir();
    await using upstream = await FakeUpstream.start();
    await using gateway = await startGateway(dir.path, upstream);
    // Answers whatever it gets, so a body that reached it shows as an answer, not as a hang.
    upstream.reply = (url, body) => {
      try {
        return providerReply(url, body);
      } catch {
        return { contentType: "application/json", chunks: ["{}"] };
      }
    };
    // JSON.parse refuses NaN where Python's json.loads takes it: such a body must not pass unread.
    const lenient = await send(
      { socketPath: gateway.address },
      {
        path: CHAT,
        body: '{"model": "gpt-4o-search-preview", "messages": [{"role": "user", "content": "hi"}], "temperature": NaN}',
      },
    );
    expect(lenient.status).toBe(400);
    expect(refusalMessage("openai", lenient.body)).toEqual({
      message: expect.stringContaining("drydock gateway: the request body is not a JSON object"),
      code: "bad_request",
    });
    expect(upstream.requests).toEqual([]);
    // A repeated field is read once, the same way for the check and for the provider.
    const twice = await send(
      { socketPath: gateway.address },
      {
        path: CHAT,
        body: '{"model": "gpt-4o-search-preview", "model": "gpt-4o", "messages": [{"role": "user", "content": "hi"}]}',
      },
    );
    expect(twice.status).toBe(200);
    expect(upstream.requests).toHaveLength(1);
    expect(upstream.requests[0]?.body).not.toContain("search");
    expect(JSON.parse(upstream.requests[0]?.body ?? "null")).toMatchObject({ model: "gpt-4o" });
  });

  it("forwards only the listed request headers", async () => {
    using dir = tempDir();
    await using upstream = await FakeUpstream.start();
    await using gateway = await startGateway(dir.path, upstream);
    const boxHeaders = {
      "content-type": "text/plain",
      accept: "application/json",
      "user-agent": "litellm/1.0",
      "anthropic-version": "2023-06-01",
      "anthropic-beta": "context-1m-2025-08-07",
      "openai-organization": "org-attacker",
      "openai-project": "proj_attacker",
      "openai-beta": "assistants=v2",
      "x-goog-user-project": "attacker-project",
      "x-stainless-os": "Linux",
      "x-exfil": "repository contents",
      "idempotency-key": "abc",
    };
    await send({ socketPath: gateway.address }, { path: MESSAGES, body: claudeParts(), headers: boxHeaders });
    await send({ socketPath: gateway.address }, { path: CHAT, body: userParts(), headers: boxHeaders });
    await send({ socketPath: gateway.address }, { path: GENERATE, body: geminiParts(), headers: boxHeaders });
    expect(upstream.requests).toHaveLength(3);
    for (const seen of upstream.requests) {
      const names = Object.keys(seen.headers).sort();
      expect(names, seen.url).toEqual(
        [
          "accept",
          "accept-encoding",
          "anthropic-version",
          "connection",
          "content-length",
          "content-type",
          "host",
          "user-agent",
          seen.url.startsWith("/v1/messages")
            ? "x-api-key"
            : seen.url.startsWith("/v1/chat")
              ? "authorization"
              : "x-goog-api-key",
        ].sort(),
      );
      expect(seen.headers["content-type"]).toBe("application/json");
      expect(seen.headers.accept).toBe("application/json");
      expect(seen.headers["user-agent"]).toBe("litellm/1.0");
      expect(seen.headers["anthropic-version"]).toBe("2023-06-01");
    }
  });

  it("forwards the anthropic-beta values the operator allows and no others", async () => {
    using dir = tempDir();
    await using upstream = await FakeUpstream.start();
    await using gateway = await startGateway(dir.path, upstream, {
      anthropicBetas: ["prompt-caching-2024-07-31", "output-128k-2025-02-19"],
    });
    await send(
      { socketPath: gateway.address },
      {
        path: MESSAGES,
        body: claudeParts(),
        headers: {
          "anthropic-beta": "context-1m-2025-08-07, prompt-caching-2024-07-31,files-api-2025-04-14",
        },
      },
    );
    await send(
      { socketPath: gateway.address },
      { path: MESSAGES, body: claudeParts(), headers: { "anthropic-beta": "files-api-2025-04-14" } },
    );
    expect(upstream.requests.map((seen) => seen.headers["anthropic-beta"])).toEqual([
      "prompt-caching-2024-07-31",
      undefined,
    ]);
  });

  it("takes the allowed anthropic-beta values from the host's DRYDOCK_ANTHROPIC_BETA by default", async () => {
    using dir = tempDir();
    await using upstream = await FakeUpstream.start();
    const before = process.env.DRYDOCK_ANTHROPIC_BETA;
    process.env.DRYDOCK_ANTHROPIC_BETA = " output-128k-2025-02-19 ,prompt-caching-2024-07-31";
    try {
      await using gateway = await startGateway(dir.path, upstream);
      await send(
        { socketPath: gateway.address },
        {
          path: MESSAGES,
          body: claudeParts(),
          headers: { "anthropic-beta": "prompt-caching-2024-07-31,context-1m-2025-08-07" },
        },
      );
    } finally {
      if (before === undefined) delete process.env.DRYDOCK_ANTHROPIC_BETA;
      else process.env.DRYDOCK_ANTHROPIC_BETA = before;
    }
    expect(upstream.requests[0]?.headers["anthropic-beta"]).toBe("prompt-caching-2024-07-31");
  });
});
