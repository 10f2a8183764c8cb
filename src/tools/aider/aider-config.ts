/**
 * The aider service as the server's options and environment configure it: the default model
 * (--model, DRYDOCK_MODEL in the environment or the .env file), the gateway's mode, keys and
 * limits, and server-wide aider options (DRYDOCK_AIDER_OPTIONS, JSON).
 */
import { readFileSync } from "node:fs";
import { parse } from "dotenv";
import {
  DEFAULT_ALLOWED_HOSTS,
  loadProviderKeys,
  OfflineModel,
  parseLlmMode,
  type UpstreamProvider,
} from "../../gateway/index.js";
import { InvalidArgumentError } from "../../util/errors.js";
import { logger } from "../../util/log.js";
import { parseAiderOptions, type AiderOptions } from "./aider-options.js";
import { AiderService } from "./aider-service.js";
import { SessionGateways } from "./session-gateways.js";

const log = logger("aider");

export interface AiderServerOptions {
  model?: string;
  /** `live` (default), `offline`, `record:FILE` or `replay:FILE`. */
  llm?: string;
  envFile?: string;
  maxLlmRequests?: number;
  maxLlmCostUsd?: number;
  /** Server-wide aider options; default DRYDOCK_AIDER_OPTIONS. */
  aiderOptions?: AiderOptions;
  /** The offline model's script (`--offline-script`); default DRYDOCK_OFFLINE_SCRIPT, else the built-in one. */
  offlineScript?: string;
  /** Whether clients are given aider_ai_code (default true); warnings about its model only matter then. */
  aiderServed?: boolean;
}

/** Environment variables naming an OpenAI-, Anthropic- or Gemini-compatible endpoint to use instead of the provider's. */
const BASE_URL_VARIABLES: ReadonlyArray<[UpstreamProvider, string]> = [
  ["openai", "DRYDOCK_OPENAI_BASE_URL"],
  ["anthropic", "DRYDOCK_ANTHROPIC_BASE_URL"],
  ["gemini", "DRYDOCK_GEMINI_BASE_URL"],
];

/** Builds the service; throws with the option to fix when the default model cannot be served. */
export function aiderServiceFromOptions(
  options: AiderServerOptions,
  env: NodeJS.ProcessEnv = process.env,
  cwd: string = process.cwd(),
): AiderService {
  const keys = loadProviderKeys({ env, ...(options.envFile ? { envFile: options.envFile } : {}) });
  const fromFile = options.envFile ? parse(readFileSync(options.envFile)) : {};
  const mode = parseLlmMode(options.llm ?? (env.DRYDOCK_LLM || "live"), cwd);
  const upstreams: Partial<Record<UpstreamProvider, string>> = {};
  const extraHosts: string[] = [];
  for (const [provider, variable] of BASE_URL_VARIABLES) {
    const value = env[variable] || fromFile[variable];
    if (!value) continue;
    let url: URL;
    try {
      url = new URL(value);
    } catch {
      throw new InvalidArgumentError(
        variable,
        `${JSON.stringify(value)} is not a URL; write e.g. https://llm-proxy.example.com`,
      );
    }
    upstreams[provider] = value;
    extraHosts.push(url.host);
    log.warn(`${provider} calls go to ${url.origin} (${variable}) instead of the provider's own API`);
  }
  const script = options.offlineScript || env.DRYDOCK_OFFLINE_SCRIPT || undefined;
  const gateways = new SessionGateways({
    mode,
    keys,
    limits: {
      ...(options.maxLlmRequests !== undefined ? { maxRequests: options.maxLlmRequests } : {}),
      ...(options.maxLlmCostUsd !== undefined ? { maxCostUsd: options.maxLlmCostUsd } : {}),
    },
    ...(extraHosts.length > 0 ? { upstreams, allowedHosts: [...DEFAULT_ALLOWED_HOSTS, ...extraHosts] } : {}),
    ...(script ? { offlineModel: OfflineModel.fromFile(script) } : {}),
  });
  const service = new AiderService({
    gateways,
    mode,
    keys,
    defaultModel: options.model || env.DRYDOCK_MODEL || fromFile.DRYDOCK_MODEL || undefined,
    options: options.aiderOptions ?? parseAiderOptions(env.DRYDOCK_AIDER_OPTIONS, "DRYDOCK_AIDER_OPTIONS"),
  });
  // A model named by flag or variable that cannot be served stops the start; with none named and
  // no key, the server still serves every other tool and aider_ai_code refuses at once, saying why.
  const named = options.model || env.DRYDOCK_MODEL || fromFile.DRYDOCK_MODEL;
  try {
    const choice = service.chooseModel();
    log.info(`aider's default model: ${choice.model} (${choice.reason}); LLM mode ${mode.kind}`);
  } catch (error) {
    if (named || !(error instanceof InvalidArgumentError)) throw error;
    const refusal = `aider_ai_code will refuse calls that name no model: ${error.message.replace(/^model: /, "")}`;
    if (options.aiderServed === false) log.debug(`${refusal} (it is not among the tools served)`);
    else log.warn(refusal);
  }
  return service;
}
