import { InvalidArgumentError } from "../util/errors.js";
import type { LlmMode } from "./llm-mode.js";
import { OFFLINE_MODEL } from "./offline-model.js";
import type { ProviderKeys } from "./provider-keys.js";
import { KEY_ENV_NAMES, type Provider, type UpstreamProvider } from "./providers.js";

/** How aider (through litellm) names the offline model: an OpenAI-compatible model at OPENAI_API_BASE. */
export const OFFLINE_AIDER_MODEL = `openai/${OFFLINE_MODEL}`;

/** The only key the box ever sees. */
export const DUMMY_KEY = "drydock-dummy-key";

/** aider 0.86.2's model aliases (aider/models.py), so that `sonnet` is known to be Anthropic's. */
const AIDER_ALIASES: Readonly<Record<string, string>> = {
  sonnet: "claude-sonnet-4-5",
  haiku: "claude-haiku-4-5",
  opus: "claude-opus-4-6",
  "4": "gpt-4-0613",
  "4o": "gpt-4o",
  "4-turbo": "gpt-4-1106-preview",
  "35turbo": "gpt-3.5-turbo",
  "35-turbo": "gpt-3.5-turbo",
  "3": "gpt-3.5-turbo",
  flash: "gemini/gemini-flash-latest",
  "flash-lite": "gemini/gemini-2.5-flash-lite",
  "gemini-2.5-pro": "gemini/gemini-2.5-pro",
  "gemini-3-pro-preview": "gemini/gemini-3-pro-preview",
  gemini: "gemini/gemini-3-pro-preview",
  "gemini-exp": "gemini/gemini-2.5-pro-exp-03-25",
};

/** The model aider picks for each key when none is named (aider/onboarding.py, same order). */
const DEFAULT_MODELS: ReadonlyArray<[UpstreamProvider, string]> = [
  ["anthropic", "sonnet"],
  ["openai", "gpt-4o"],
  ["gemini", "gemini/gemini-2.5-pro"],
];

const OFFLINE_NAMES = new Set([OFFLINE_MODEL, OFFLINE_AIDER_MODEL, "offline", `offline/${OFFLINE_MODEL}`]);

/** The provider a model name (as aider takes it: `gpt-4o`, `anthropic/claude-…`, `sonnet`) belongs to; undefined when the gateway does not route it. */
export function providerOfModel(model: string): Provider | undefined {
  const name = model.trim().toLowerCase();
  if (OFFLINE_NAMES.has(name)) return "offline";
  const full = AIDER_ALIASES[name] ?? name;
  const slash = full.indexOf("/");
  if (slash >= 0) {
    const prefix = full.slice(0, slash);
    return prefix === "openai" || prefix === "anthropic" || prefix === "gemini" ? prefix : undefined;
  }
  if (/^(gpt-|chatgpt-|o\d|codex-|ft:gpt)/.test(full)) return "openai";
  if (full.startsWith("claude")) return "anthropic";
  if (full.startsWith("gemini")) return "gemini";
  return undefined;
}

/** Whether the host holds a key for a provider (the offline model needs none). */
export function hasKeyFor(provider: Provider, keys: ProviderKeys): boolean {
  return provider === "offline" || keys[provider] !== undefined;
}

export interface AiderModelChoice {
  /** The `--model` value for aider. */
  model: string;
  provider: Provider;
  offline: boolean;
  /** Why this model, in a sentence for logs and tool results. */
  reason: string;
}

/** Why aider has no model when the host holds no key and none was named, and the ways out. */
export const NO_KEY =
  "no model provider key on the host, so aider has no model to call: give drydock ANTHROPIC_API_KEY, OPENAI_API_KEY or GEMINI_API_KEY in its environment or a .env file given with --keys-file (for Claude Code: claude mcp add drydock -e ANTHROPIC_API_KEY=... -- ...), or ask for the offline demo model, which only knows drydock's sample repository: model openai/drydock-offline, or --llm offline (serve, eval)";

/**
 * The model aider should use: the one asked for, else the default for the first key the host holds
 * (Anthropic, OpenAI, Gemini, as aider would choose). The offline model answers only when asked
 * for (by name, or `--llm offline`): it knows drydock's sample repository and nothing else, so a
 * silent fallback to it would answer a real task after a minute with unrelated edits. Throws,
 * naming the fix, when no model can be served (no key and none asked for, no key for the model's
 * provider, a provider the gateway does not route, or a real model while `--llm offline`). In
 * replay mode no key is needed, and with no model named the offline model's recorded answers serve.
 */
export function chooseAiderModel(options: {
  requested?: string;
  keys: ProviderKeys;
  mode: LlmMode;
}): AiderModelChoice {
  const { keys, mode } = options;
  const requested = options.requested?.trim() || undefined;
  const offline = (reason: string): AiderModelChoice => ({
    model: OFFLINE_AIDER_MODEL,
    provider: "offline",
    offline: true,
    reason,
  });
  if (requested === undefined) {
    if (mode.kind === "offline") return offline("--llm offline: the offline model answers");
    const found = DEFAULT_MODELS.find(([provider]) => keys[provider] !== undefined);
    if (!found && mode.kind === "replay") return offline("--llm replay with no model named");
    if (!found) throw new InvalidArgumentError("model", NO_KEY);
    const [provider, model] = found;
    return {
      model,
      provider,
      offline: false,
      reason: `default model for the host's ${keys[provider]?.envName}`,
    };
  }
  const provider = providerOfModel(requested);
  if (provider === "offline") return offline(`model ${requested} asked for`);
  if (provider === undefined) {
    throw new InvalidArgumentError(
      "model",
      `${JSON.stringify(requested)} is not a model the gateway can route; use an OpenAI, Anthropic or Gemini model (e.g. gpt-4o, sonnet, gemini/gemini-2.5-pro) or ${OFFLINE_AIDER_MODEL}`,
    );
  }
  if (mode.kind === "offline") {
    throw new InvalidArgumentError(
      "model",
      `drydock runs with --llm offline, so ${requested} cannot be called; omit model or use ${OFFLINE_AIDER_MODEL}`,
    );
  }
  if (mode.kind !== "replay" && !hasKeyFor(provider, keys)) {
    throw new InvalidArgumentError(
      "model",
      `${requested} needs ${KEY_ENV_NAMES[provider].join(" or ")} on the host (drydock's environment or .env file); set it, or use ${OFFLINE_AIDER_MODEL}`,
    );
  }
  // litellm reads a bare gemini-* name as Vertex AI, which the gateway does not route.
  const model =
    provider === "gemini" && !requested.includes("/") && !AIDER_ALIASES[requested.toLowerCase()]
      ? `gemini/${requested}`
      : requested;
  return { model, provider, offline: false, reason: `model ${requested} asked for` };
}

/** The base URL aider (litellm) uses for a provider, through the in-box relay on 127.0.0.1:`port`. */
export function relayBaseUrl(port: number, provider: Provider): string {
  const root = `http://127.0.0.1:${port}`;
  switch (provider) {
    case "openai":
      return `${root}/openai/v1`;
    case "offline":
      return `${root}/offline/v1`;
    case "anthropic":
      return `${root}/anthropic`; // litellm appends /v1/messages
    case "gemini":
      return `${root}/gemini/v1beta`; // litellm appends /models/{model}:{method}
  }
}

/**
 * What aider should know of the offline model, as a `--model-metadata-file` (litellm's format).
 * Without it aider looks the model up in a price list it downloads, which in a box without network
 * costs time and prints a connection error.
 */
export const OFFLINE_MODEL_METADATA = {
  [OFFLINE_AIDER_MODEL]: {
    max_input_tokens: 128_000,
    max_output_tokens: 16_384,
    max_tokens: 16_384,
    input_cost_per_token: 0,
    output_cost_per_token: 0,
    litellm_provider: "openai",
    mode: "chat",
  },
} as const;

/**
 * The environment for aider in the box: every provider's base URL (litellm's variable names)
 * pointing at the relay, dummy keys, no update check or analytics, and for the offline model the
 * diff edit format (aider would pick "whole" for a model it does not know), no unknown-model
 * warning and, when `modelMetadataFile` names a file in the box holding OFFLINE_MODEL_METADATA,
 * that file. Nothing secret.
 */
export function aiderEnv(options: {
  port: number;
  choice: AiderModelChoice;
  modelMetadataFile?: string;
}): Record<string, string> {
  const { port, choice } = options;
  const env: Record<string, string> = {
    AIDER_MODEL: choice.model,
    OPENAI_API_BASE: relayBaseUrl(port, choice.offline ? "offline" : "openai"),
    OPENAI_API_KEY: DUMMY_KEY,
    ANTHROPIC_API_BASE: relayBaseUrl(port, "anthropic"),
    ANTHROPIC_API_KEY: DUMMY_KEY,
    GEMINI_API_BASE: relayBaseUrl(port, "gemini"),
    GEMINI_API_KEY: DUMMY_KEY,
    // No network in the box: nothing should try to fetch price maps, updates or analytics.
    LITELLM_LOCAL_MODEL_COST_MAP: "True",
    AIDER_CHECK_UPDATE: "false",
    // AIDER_ANALYTICS=false alone still costs seconds a run; the "disable" switch does not.
    AIDER_ANALYTICS_DISABLE: "true",
  };
  if (choice.offline) {
    env.AIDER_EDIT_FORMAT = "diff";
    env.AIDER_SHOW_MODEL_WARNINGS = "false";
    if (options.modelMetadataFile) env.AIDER_MODEL_METADATA_FILE = options.modelMetadataFile;
  }
  return env;
}
