import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { MockLlmServer } from "../../../src/gateway/mock-llm-server.js";
import { DEFAULT_SCRIPT_PATH, OfflineModel } from "../../../src/gateway/offline-model.js";
import { chooseRule, parseOfflineScript } from "../../../src/gateway/offline-script.js";
import { estimatePromptTokens, estimateTokens } from "../../../src/gateway/token-estimate.js";
import { send, sseData } from "./http-client.js";

const script = parseOfflineScript(
  JSON.stringify([
    { name: "stale", match: "stale edit", reply: "stale reply" },
    {
      name: "regex",
      match: { regex: "^Make (\\w+) louder$", flags: "m" },
      reply: ["line one", "line two", ""],
    },
    { name: "only-for-big", match: "anything", model: "big-model", reply: "big reply" },
    { name: "greet", match: "GREET", reply: "greet reply" },
  ]),
  "/scripts/test.json",
);

const chat = (content: string, extra: Record<string, unknown> = {}) => ({
  model: "drydock-offline",
  messages: [
    { role: "system", content: "You are a helpful assistant." },
    { role: "user", content },
  ],
  ...extra,
});

describe("offline script", () => {
  it("tries the last user message before the whole request, first rule first", () => {
    const prompt = { model: "m", lastUserText: "please greet", wholeText: "stale edit ... please greet" };
    expect(chooseRule(script, prompt)?.name).toBe("greet");
    expect(chooseRule(script, { ...prompt, lastUserText: "nothing here" })?.name).toBe("stale");
  });

  it("matches phrases case-insensitively and regexes with their flags", () => {
    expect(chooseRule(script, { model: "m", lastUserText: "Greet them", wholeText: "" })?.name).toBe("greet");
    expect(
      chooseRule(script, { model: "m", lastUserText: "x\nMake bells louder\ny", wholeText: "" })?.name,
    ).toBe("regex");
    expect(
      chooseRule(script, { model: "m", lastUserText: "make bells louder", wholeText: "" }),
    ).toBeUndefined();
  });

  it("applies a rule with a model only to requests for that model", () => {
    expect(chooseRule(script, { model: "small", lastUserText: "anything", wholeText: "" })).toBeUndefined();
    expect(
      chooseRule(script, { model: "openai/BIG-model", lastUserText: "anything", wholeText: "" })?.name,
    ).toBe("only-for-big");
  });

  it("rejects a script that is not a list of rules, naming the file and the field", () => {
    expect(() => parseOfflineScript("{", "/s.json")).toThrow(/\/s\.json is not valid JSON/);
    expect(() => parseOfflineScript(JSON.stringify([{ match: "x" }]), "/s.json")).toThrow(
      /\/s\.json .* at rules\.0\.reply/,
    );
    expect(() =>
      parseOfflineScript(JSON.stringify([{ match: { regex: "(" }, reply: "r" }]), "/s.json"),
    ).toThrow(/rule 1 has a bad regex/);
  });

  it("accepts the object form with a description", () => {
    const parsed = parseOfflineScript(
      JSON.stringify({ description: "d", rules: [{ match: "a", reply: "b" }] }),
      "x",
    );
    expect(parsed.rules.map((rule) => rule.reply)).toEqual(["b"]);
  });
});

describe("OfflineModel over HTTP", () => {
  it("answers a non-streaming chat completion with the rule's reply and estimated usage", async () => {
    await using server = await MockLlmServer.start({ model: new OfflineModel(script) });
    const request = chat("Please greet the user");
    const reply = await send({ baseUrl: server.url }, { path: "/chat/completions", body: request });
    expect(reply.status).toBe(200);
    const body = JSON.parse(reply.body);
    expect(body.object).toBe("chat.completion");
    expect(body.model).toBe("drydock-offline");
    expect(body.choices[0].message).toEqual({ role: "assistant", content: "greet reply", refusal: null });
    expect(body.choices[0].finish_reason).toBe("stop");
    expect(body.usage).toEqual({
      prompt_tokens: estimatePromptTokens(["You are a helpful assistant.", "Please greet the user"]),
      completion_tokens: estimateTokens("greet reply"),
      total_tokens: estimatePromptTokens(["You are a helpful assistant.", "Please greet the user"]) + 3,
    });
  });

  it("streams the same reply as SSE chunks, with usage when asked, ending in [DONE]", async () => {
    await using server = await MockLlmServer.start({ model: new OfflineModel(script) });
    const reply = await send(
      { baseUrl: server.url },
      {
        path: "/chat/completions",
        body: chat("Make bells louder", { stream: true, stream_options: { include_usage: true } }),
      },
    );
    expect(reply.status).toBe(200);
    expect(reply.headers["content-type"]).toContain("text/event-stream");
    const events = sseData(reply.body);
    expect(events.at(-1)).toBe("[DONE]");
    const chunks = events.slice(0, -1) as Array<{
      object: string;
      choices: Array<{ delta: { content?: string; role?: string }; finish_reason: string | null }>;
      usage?: { completion_tokens: number };
    }>;
    expect(chunks.every((chunk) => chunk.object === "chat.completion.chunk")).toBe(true);
    expect(chunks[0]?.choices[0]?.delta.role).toBe("assistant");
    const text = chunks.map((chunk) => chunk.choices[0]?.delta.content ?? "").join("");
    expect(text).toBe("line one\nline two\n");
    expect(chunks.filter((chunk) => chunk.choices[0]?.finish_reason === "stop")).toHaveLength(1);
    expect(chunks.at(-1)?.usage?.completion_tokens).toBe(estimateTokens("line one\nline two\n"));
  });

  it("sends no usage chunk in a stream that did not ask for one", async () => {
    await using server = await MockLlmServer.start({ model: new OfflineModel(script) });
    const reply = await send(
      { baseUrl: server.url },
      { path: "/chat/completions", body: chat("greet", { stream: true }) },
    );
    expect(
      sseData(reply.body).some((event) => typeof event === "object" && event !== null && "usage" in event),
    ).toBe(false);
  });

  it("answers a request no rule matches with a 200 message naming the script and its phrases", async () => {
    await using server = await MockLlmServer.start({ model: new OfflineModel(script) });
    const reply = await send(
      { baseUrl: server.url },
      { path: "/chat/completions", body: chat("refactor the parser") },
    );
    expect(reply.status).toBe(200);
    const content = JSON.parse(reply.body).choices[0].message.content as string;
    expect(content).toContain("no rule in the script /scripts/test.json matches");
    expect(content).toContain('"stale edit"');
    expect(content).toContain("/^Make (\\w+) louder$/m");
  });

  it("lists its model and refuses malformed requests with OpenAI-shaped errors", async () => {
    await using server = await MockLlmServer.start({ model: new OfflineModel(script) });
    const models = await send({ baseUrl: server.url }, { path: "/models" });
    expect(JSON.parse(models.body).data.map((model: { id: string }) => model.id)).toEqual([
      "drydock-offline",
      "big-model",
    ]);
    const bad = await send({ baseUrl: server.url }, { path: "/chat/completions", body: "not json" });
    expect(bad.status).toBe(400);
    expect(JSON.parse(bad.body).error.message).toMatch(/not JSON/);
    const empty = await send({ baseUrl: server.url }, { path: "/chat/completions", body: { messages: [] } });
    expect(empty.status).toBe(400);
    const unknown = await send({ baseUrl: server.url }, { path: "/embeddings", body: {} });
    expect(unknown.status).toBe(404);
  });

  it("listens on loopback only by default", async () => {
    await using server = await MockLlmServer.start({ model: new OfflineModel(script) });
    expect(server.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/v1$/);
  });
});

describe("the default script", () => {
  const model = OfflineModel.fromFile(DEFAULT_SCRIPT_PATH);
  const greetPy = readFileSync(new URL("../../../examples/sample-repo/greet.py", import.meta.url), "utf8");
  const ask = (content: string) =>
    JSON.parse(
      model.answer({ method: "POST", path: "/v1/chat/completions", body: JSON.stringify(chat(content)) })
        .chunks[0] ?? "",
    ).choices[0].message.content as string;

  it("answers the demo prompt with an edit block whose SEARCH text is in the sample repo's greet.py", () => {
    const reply = ask("Make greet() return 'Hello, NAME!' so the tests pass");
    const block =
      /^greet\.py\n```python\n<<<<<<< SEARCH\n([\s\S]*?)=======\n([\s\S]*?)>>>>>>> REPLACE\n```$/m.exec(
        reply,
      );
    expect(block).not.toBeNull();
    expect(greetPy).toContain(block?.[1]);
    expect(greetPy.replace(block?.[1] ?? "", block?.[2] ?? "")).toContain('return f"Hello, {name}!"');
  });

  it("answers the stale-edit phrase with a SEARCH text that is not in greet.py", () => {
    const reply = ask("Apply the stale edit to greet.py");
    const search = /<<<<<<< SEARCH\n([\s\S]*?)=======/.exec(reply)?.[1];
    expect(search).toBeTruthy();
    expect(greetPy).not.toContain(search);
  });

  it("stops after aider reports a failed edit instead of repeating it", () => {
    const reply = ask("# 1 SEARCH/REPLACE block failed to match!\n\n## SearchReplaceNoExactMatch: ...");
    expect(reply).not.toContain("<<<<<<< SEARCH");
  });
});
