/** The aider tools, in the order clients list them. */
import type { AnyToolDefinition } from "../tool.js";
import { aiderCodeTool } from "./aider-code-tool.js";
import { jobStatusTool } from "./job-status-tool.js";
import { listModelsTool } from "./list-models-tool.js";

export const aiderTools: AnyToolDefinition[] = [aiderCodeTool, jobStatusTool, listModelsTool];
