/**
 * Tools beyond the core set, and the services they need. Kept apart so the core server starts
 * without them; each family adds itself here.
 */
import type { AnyToolDefinition, ToolServices } from "../tools/tool.js";

export interface ExtensionOptions {
  model?: string;
  llm?: string;
  envFile?: string;
  maxLlmRequests?: number;
  maxLlmCostUsd?: number;
}

export async function serverExtensions(
  _options: ExtensionOptions,
): Promise<{ extraTools: AnyToolDefinition[]; extraServices: Partial<ToolServices> }> {
  return { extraTools: [], extraServices: {} };
}
