/**
 * What a box may ask of a provider through the gateway: model calls and the model list, nothing
 * else. The key is the operator's. Without this the box could read or change what the provider
 * account holds (stored files, batches, assistants, vector stores, fine-tunes, admin) and start
 * work no budget counts; and the providers' server-side tools (web search, URL fetch, code
 * execution, remote MCP servers) would give it the network it does not have. Pure.
 */
import { isRecord } from "./chat-request.js";
import type { Provider } from "./providers.js";

type Call = [method: string, path: RegExp];

const MODEL_CALLS: Record<Exclude<Provider, "offline">, Call[]> = {
  openai: [
    ["POST", /^\/v1\/chat\/completions$/],
    ["POST", /^\/v1\/completions$/],
    ["GET", /^\/v1\/models(\/[\w.:-]+)?$/],
  ],
  anthropic: [
    ["POST", /^\/v1\/messages$/],
    ["POST", /^\/v1\/messages\/count_tokens$/],
    ["GET", /^\/v1\/models(\/[\w.:-]+)?$/],
  ],
  gemini: [
    ["POST", /^\/v1(beta)?\/models\/[\w.-]+:(generateContent|streamGenerateContent|countTokens)$/],
    ["GET", /^\/v1(beta)?\/models(\/[\w.-]+)?$/],
  ],
};

/** Anthropic tools the provider runs itself (client tools, such as the text editor, run in the box). */
const ANTHROPIC_SERVER_TOOL = /^(web_search|web_fetch|code_execution)/;
/** Gemini tool entries that only declare functions for the caller to run. */
const GEMINI_CLIENT_TOOL_KEYS = new Set(["functionDeclarations", "function_declarations"]);

/**
 * Why the gateway refuses this call, or undefined when it may go on. `path` is the request's path
 * after the provider prefix, query included; `body` the parsed JSON body, if any.
 */
export function callRefusal(
  provider: Provider,
  method: string,
  path: string,
  body: unknown,
): string | undefined {
  if (provider === "offline") return undefined;
  const bare = path.split("?", 1)[0] ?? "";
  const plain = !/%|\\|\/\/|(^|\/)\.\.?(\/|$)/.test(bare);
  if (!plain || !MODEL_CALLS[provider].some(([m, re]) => m === method && re.test(bare))) {
    return `${method} ${bare} is not a model call; the gateway carries only model calls (${MODEL_CALLS[
      provider
    ]
      .map(([m, re]) => `${m} ${re.source.replace(/^\^|\$$/g, "").replace(/\\/g, "")}`)
      .join(", ")}) to ${provider}, never the account's other APIs`;
  }
  if (!isRecord(body)) return undefined;
  const tools = Array.isArray(body.tools) ? body.tools.filter(isRecord) : [];
  if (provider === "openai") {
    if (body.web_search_options !== undefined) return serverTool("web_search_options");
    const other = tools.find((t) => t.type !== undefined && t.type !== "function" && t.type !== "custom");
    if (other) return serverTool(String(other.type));
  }
  if (provider === "anthropic") {
    if (body.mcp_servers !== undefined) {
      return "the request names remote MCP servers (mcp_servers), which the provider would connect to; the box has no network, and the gateway does not give it one";
    }
    const server = tools.find((t) => typeof t.type === "string" && ANTHROPIC_SERVER_TOOL.test(t.type));
    if (server) return serverTool(String(server.type));
  }
  if (provider === "gemini") {
    for (const tool of tools) {
      const key = Object.keys(tool).find((k) => !GEMINI_CLIENT_TOOL_KEYS.has(k));
      if (key) return serverTool(key);
    }
  }
  return undefined;
}

function serverTool(name: string): string {
  return `the request asks for the provider's server-side tool ${name}, which would reach the network for the box; the box has no network, and the gateway does not give it one. Use function tools`;
}
