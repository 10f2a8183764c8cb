/**
 * Tools beyond the core set, and the services they need. Kept apart so the core server starts
 * without them; each family adds itself here.
 */
import { aiderServiceFromOptions } from "../tools/aider/aider-config.js";
import type { AiderOptions } from "../tools/aider/aider-options.js";
import { aiderTools } from "../tools/aider/aider-tools.js";
import type { AnyToolDefinition, ToolServices } from "../tools/tool.js";

export interface ExtensionOptions {
  /** Default aider model (else DRYDOCK_MODEL, else the default for the host's key, else offline). */
  model?: string;
  /** LLM gateway mode: live, offline, record:FILE, replay:FILE. */
  llm?: string;
  /** .env file with provider keys (kept on the host). */
  envFile?: string;
  maxLlmRequests?: number;
  maxLlmCostUsd?: number;
  /** Server-wide aider options (default: DRYDOCK_AIDER_OPTIONS, JSON). */
  aiderOptions?: AiderOptions;
  /** The offline model's script (default: DRYDOCK_OFFLINE_SCRIPT, else the built-in one). */
  offlineScript?: string;
  /** Whether clients are given aider_ai_code (default true; `serve --tools` may leave it out). */
  aiderServed?: boolean;
}

export async function serverExtensions(
  options: ExtensionOptions,
): Promise<{ extraTools: AnyToolDefinition[]; extraServices: Partial<ToolServices> }> {
  const aider = aiderServiceFromOptions(options);
  return { extraTools: [...aiderTools], extraServices: { aider } };
}
