/** The tools that work on a session's files: editors, JSON, search, diff, and step-by-step thinking. */
import { codeSearchTool } from "./code-search-tool.js";
import { fileEditorTool, strReplaceBasedEditTool } from "./file-editor-tools.js";
import { gitDiffTool } from "./git-diff-tool.js";
import { jsonEditorTool } from "./json-editor-tool.js";
import { sequentialThinkingTool } from "./thinking-tool.js";
import type { AnyToolDefinition } from "./tool.js";

export const workspaceTools: AnyToolDefinition[] = [
  fileEditorTool,
  strReplaceBasedEditTool,
  jsonEditorTool,
  codeSearchTool,
  gitDiffTool,
  sequentialThinkingTool,
];
