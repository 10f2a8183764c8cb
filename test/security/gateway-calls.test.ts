/**
 * The gateway is the box's only way out, and it carries the operator's key. It must carry model
 * calls and nothing else: not the provider's account API (stored files, batches, assistants,
 * fine-tunes, admin), where the key would let the box read or change what the account holds and
 * start work no budget counts; and not the providers' server-side tools (web search, URL fetch,
 * code execution, remote MCP servers), which would give the box the network it does not have.
 * Refused calls never reach the provider.
 */
import { describe, expect, it } from "vitest";
import { callRefusal } from "../../src/gateway/call-policy.js";
import { FakeUpstream } from "../unit/gateway/fake-upstream.js";
import { startGateway, tempDir } from "../unit/gateway/gateway-fixture.js";
import { send } from "../unit/gateway/http-client.js";

const chat = { model: "gpt-4o", messages: [{ role: "user", content: "hi" }] };
const claude = { model: "claude-sonnet-4-5", max_tokens: 10, messages: [{ role: "user", content: "hi" }] };
const gemini = { contents: [{ role: "user", parts: [{ text: "hi" }] }] };

/** [provider path as the box sends it, method, body]: each must be refused. */
const REFUSED: Array<[string, string, unknown]> = [
  ["/openai/v1/files", "GET", undefined],
  ["/openai/v1/files/file-abc/content", "GET", undefined],
  ["/openai/v1/files", "POST", { purpose: "assistants" }],
  ["/openai/v1/files/file-abc", "DELETE", undefined],
  ["/openai/v1/batches", "POST", { input_file_id: "file-abc", endpoint: "/v1/chat/completions" }],
  ["/openai/v1/fine_tuning/jobs", "POST", { model: "gpt-4o-mini", training_file: "file-abc" }],
  ["/openai/v1/assistants", "GET", undefined],
  ["/openai/v1/vector_stores", "GET", undefined],
  ["/openai/v1/organization/users", "GET", undefined],
  ["/openai/v1/responses", "POST", { model: "gpt-4o", input: "hi", tools: [{ type: "web_search" }] }],
  ["/openai/v1/chat/completions/../../files", "POST", chat],
  ["/openai/v1/chat%2Fcompletions", "POST", chat],
  ["/openai/v1/models/%2e%2e%2ffiles", "GET", undefined],
  ["/openai/v1//chat/completions", "POST", chat],
  ["/openai/v1/chat/completions", "GET", undefined],
  ["/openai/v1/chat/completions", "POST", { ...chat, web_search_options: {} }],
  ["/openai/v1/chat/completions", "POST", { ...chat, tools: [{ type: "web_search_preview" }] }],
  ["/openai/v1/chat/completions", "POST", { ...chat, tools: [{ type: "file_search" }] }],
  ["/openai/v1/chat/completions", "POST", { ...chat, tools: [{ type: "computer_use_preview" }] }],
  ["/anthropic/v1/files", "GET", undefined],
  ["/anthropic/v1/messages/batches", "POST", { requests: [] }],
  ["/anthropic/v1/organizations/api_keys", "GET", undefined],
  [
    "/anthropic/v1/messages",
    "POST",
    { ...claude, tools: [{ type: "web_fetch_20250910", name: "web_fetch" }] },
  ],
  [
    "/anthropic/v1/messages",
    "POST",
    { ...claude, tools: [{ type: "web_search_20250305", name: "web_search" }] },
  ],
  [
    "/anthropic/v1/messages",
    "POST",
    { ...claude, tools: [{ type: "code_execution_20250522", name: "code" }] },
  ],
  [
    "/anthropic/v1/messages",
    "POST",
    { ...claude, mcp_servers: [{ type: "url", url: "https://evil.example/mcp" }] },
  ],
  [
    "/anthropic/v1/messages",
    "POST",
    { ...claude, tools: [{ type: "mcp_toolset", mcp_server_name: "evil" }] },
  ],
  ["/anthropic/v1/messages", "POST", { ...claude, container: "container_011abc" }],
  ["/gemini/v1beta/files", "GET", undefined],
  ["/gemini/v1beta/tunedModels", "POST", {}],
  ["/gemini/v1beta/cachedContents", "GET", undefined],
  [
    "/gemini/v1beta/models/gemini-2.5-pro:generateContent",
    "POST",
    { ...gemini, tools: [{ googleSearch: {} }] },
  ],
  [
    "/gemini/v1beta/models/gemini-2.5-pro:generateContent",
    "POST",
    { ...gemini, tools: [{ url_context: {} }] },
  ],
  [
    "/gemini/v1beta/models/gemini-2.5-pro:streamGenerateContent",
    "POST",
    { ...gemini, tools: [{ codeExecution: {} }] },
  ],
];

/** What aider (through litellm) sends: each must go through. */
const ALLOWED: Array<[string, string, unknown]> = [
  ["/openai/v1/chat/completions", "POST", chat],
  [
    "/openai/v1/chat/completions",
    "POST",
    { ...chat, stream: true, tools: [{ type: "function", function: { name: "f", parameters: {} } }] },
  ],
  ["/openai/v1/models", "GET", undefined],
  [
    "/anthropic/v1/messages",
    "POST",
    { ...claude, tools: [{ name: "edit", input_schema: { type: "object" } }] },
  ],
  [
    "/anthropic/v1/messages",
    "POST",
    {
      ...claude,
      tools: [
        { type: "text_editor_20250124", name: "str_replace_editor" },
        { type: "bash_20250124", name: "bash" },
        { type: "memory_20250818", name: "memory" },
        { type: "custom", name: "edit", input_schema: { type: "object" } },
      ],
    },
  ],
  ["/gemini/v1beta/models/gemini-2.5-pro:generateContent", "POST", gemini],
  [
    "/gemini/v1beta/models/gemini-2.5-pro:streamGenerateContent?alt=sse",
    "POST",
    { ...gemini, tools: [{ functionDeclarations: [{ name: "f" }] }] },
  ],
];

describe("what the gateway carries", () => {
  it("refuses the provider's account API and server-side tools without contacting the provider", async () => {
    using dir = tempDir();
    await using upstream = await FakeUpstream.start();
    await using gateway = await startGateway(dir.path, upstream);
    for (const [path, method, body] of REFUSED) {
      const reply = await send(
        { socketPath: gateway.address },
        { path, method, ...(body === undefined ? {} : { body }) },
      );
      expect(reply.status, `${method} ${path}`).toBe(400);
      expect(reply.body, `${method} ${path}`).toMatch(
        /drydock gateway: .*(only model calls|server-side tool|remote MCP|code containers)/,
      );
    }
    expect(upstream.requests).toEqual([]);
    expect(gateway.usage()).toMatchObject({ requests: 0, refused: REFUSED.length });
  });

  it("carries the model calls aider makes", async () => {
    using dir = tempDir();
    await using upstream = await FakeUpstream.start();
    await using gateway = await startGateway(dir.path, upstream);
    for (const [path, method, body] of ALLOWED) {
      const reply = await send(
        { socketPath: gateway.address },
        { path, method, ...(body === undefined ? {} : { body }) },
      );
      expect(reply.body, `${method} ${path}`).not.toMatch(/drydock gateway/);
    }
    expect(upstream.requests).toHaveLength(ALLOWED.length);
  });

  it("names what it refuses and what it allows", () => {
    expect(callRefusal("openai", "GET", "/v1/files", undefined)).toMatch(
      /GET \/v1\/files is not a model call; the gateway carries only model calls/,
    );
    expect(
      callRefusal("anthropic", "POST", "/v1/messages", { tools: [{ type: "web_fetch_20250910" }] }),
    ).toMatch(/server-side tool web_fetch_20250910/);
    expect(callRefusal("offline", "GET", "/anything", undefined)).toBeUndefined();
  });
});
