/** Every tool drydock serves, in the order clients list them. */
import { shellTools } from "./bash-tool.js";
import { sessionTools } from "./session-tools.js";
import { taskStackTools } from "./task-stack-tools.js";
import type { AnyToolDefinition } from "./tool.js";
import { workspaceTools } from "./workspace-tools.js";

export function allTools(extra: AnyToolDefinition[] = []): AnyToolDefinition[] {
  return [...sessionTools, ...shellTools, ...workspaceTools, ...extra, ...taskStackTools];
}
