/** Every tool drydock serves, in the order clients list them. */
import { shellTools } from "./bash-tool.js";
import { checkpointTools } from "./checkpoint-tools.js";
import { sessionTools } from "./session-tools.js";
import { taskStackTools } from "./task-stack-tools.js";
import type { AnyToolDefinition, ToolDefinition } from "./tool.js";
import { workspaceTools } from "./workspace-tools.js";

/** Hints for the shell's tools, where they do not carry their own. */
const shellHints: Record<string, ToolDefinition["annotations"]> = {
  // Any command may delete or overwrite files in the box; the box has no network by default.
  bash: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: false },
  task_done: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: false },
};

function withHints(tool: AnyToolDefinition): AnyToolDefinition {
  const hints = shellHints[tool.name];
  return tool.annotations !== undefined || hints === undefined ? tool : { ...tool, annotations: hints };
}

const hintedShellTools = shellTools.map(withHints);

export function allTools(extra: AnyToolDefinition[] = []): AnyToolDefinition[] {
  return [
    ...sessionTools,
    ...checkpointTools,
    ...hintedShellTools,
    ...workspaceTools,
    ...extra,
    ...taskStackTools,
  ];
}
