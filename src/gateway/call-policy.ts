/**
 * What a box may ask of a provider through the gateway: model calls and the model list, nothing
 * else. The key is the operator's. Without this the box could read or change what the provider
 * account holds (stored files, batches, assistants, vector stores, fine-tunes, admin) and start
 * work no budget counts; and the providers' server-side tools (web search, URL fetch, code
 * execution, remote MCP servers) would give it the network it does not have. Pure.
 */
import { isRecord } from "./chat-request.js";
import { contentRefusal } from "./content-policy.js";
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

/**
 * Anthropic tool types the caller runs (in the box): custom tools and the versioned client tools.
 * Every other type (web search, web fetch, code execution, tool search, MCP toolsets, and any the
 * provider adds) is one the provider runs itself.
 */
const ANTHROPIC_CLIENT_TOOL = /^(custom|(bash|text_editor|computer|memory)_\d{8})$/;
/**
 * Models that search the web by themselves, with no tool declared: OpenAI's `*-search-preview`,
 * `*-search-api` and `*-deep-research` models (no Anthropic or Gemini model does; they search
 * through tools).
 */
const SEARCH_MODEL = /search|deep-research/i;
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
  const model = isRecord(body) && typeof body.model === "string" ? body.model : geminiModel(bare);
  if (method === "POST" && model !== undefined && SEARCH_MODEL.test(model)) {
    return `model: ${model} searches the web by itself, so the provider would reach the network for the box; the box has no network, and the gateway does not give it one. Use a model that does not search`;
  }
  if (!isRecord(body)) return undefined;
  const tools = Array.isArray(body.tools) ? [...body.tools.entries()] : [];
  if (provider === "openai") {
    if (body.web_search_options !== undefined) {
      return serverTool("web_search_options", "web_search_options");
    }
    for (const [i, tool] of tools) {
      if (!isRecord(tool) || tool.type === undefined) continue;
      if (tool.type !== "function" && tool.type !== "custom")
        return serverTool(`tools[${i}].type`, tool.type);
    }
  }
  if (provider === "anthropic") {
    if (body.mcp_servers !== undefined) {
      return "mcp_servers: the request names remote MCP servers, which the provider would connect to; the box has no network, and the gateway does not give it one";
    }
    if (body.container !== undefined) {
      return "container: the provider's code containers are refused; they run code with the network and hold files in the account";
    }
    for (const [i, tool] of tools) {
      if (!isRecord(tool) || tool.type === undefined) continue;
      if (!ANTHROPIC_CLIENT_TOOL.test(String(tool.type))) return serverTool(`tools[${i}].type`, tool.type);
    }
  }
  if (provider === "gemini") {
    // countTokens may wrap a whole generateContent request; it is read the same way.
    for (const field of ["generateContentRequest", "generate_content_request"]) {
      if (!isRecord(body[field])) continue;
      const refusal = callRefusal(provider, method, path, body[field]);
      if (refusal) return `${field}.${refusal}`;
    }
    for (const [i, tool] of tools) {
      if (!isRecord(tool)) continue;
      const key = Object.keys(tool).find((k) => !GEMINI_CLIENT_TOOL_KEYS.has(k));
      if (key) return serverTool(`tools[${i}].${key}`, key);
    }
  }
  return contentRefusal(provider, body);
}

/** The model a Gemini path names (`/v1beta/models/M:generateContent`). */
function geminiModel(path: string): string | undefined {
  return /^\/v1(?:beta)?\/models\/([^/:]+)/.exec(path)?.[1];
}

function serverTool(field: string, name: unknown): string {
  return `${field}: the request asks for the provider's server-side tool ${String(name)}, which would reach the network for the box; the box has no network, and the gateway does not give it one. Use function tools`;
}
