/**
 * file_editor, and the same editor as str_replace_based_edit_tool with the parameter names of the
 * text-editor tool many models are trained on.
 */
import { z } from "zod";
import { TEXT_EDITOR_NAMES } from "./edit/editor-names.js";
import { type EditOperation, type EditRequest, type EditResult, runEdit } from "./file-editor.js";
import { parseArgs } from "./parse-args.js";
import { textFirst } from "./reply-text.js";
import { defineTool, type ToolContext } from "./tool.js";
import { sessionIdInput } from "./session-id-input.js";

const pathInput = z
  .string()
  .describe(
    "File or directory under /workspace, absolute or relative to it (src/app.ts); paths leading outside, also through symlinks, are refused.",
  );
const viewRangeInput = z
  .array(z.number().int())
  .length(2, "must be a pair [start, end] of line numbers; end -1 means to the end of the file")
  .optional()
  .describe(
    "For view of a file: [start, end] line numbers, 1-based and inclusive; end -1 means to the end of the file.",
  );
const overwriteInput = z
  .boolean()
  .optional()
  .describe("For create: replace an existing file (default false: create refuses to overwrite).");

const fileEditorInput = {
  operation: z.enum(["view", "create", "replace", "insert", "undo"]).describe("What to do."),
  path: pathInput,
  content: z.string().optional().describe("For create: the whole file. For insert: the lines to insert."),
  old_string: z
    .string()
    .optional()
    .describe("For replace: the exact text to replace; it must occur exactly once."),
  new_string: z
    .string()
    .optional()
    .describe("For replace: the text to put in its place (may be empty to delete)."),
  line_number: z
    .number()
    .int()
    .optional()
    .describe("For insert: insert after this line (0 = at the top, the line count = at the end)."),
  view_range: viewRangeInput,
  overwrite: overwriteInput,
  session_id: sessionIdInput,
};

const textEditorInput = {
  command: z.enum(["view", "create", "str_replace", "insert", "undo_edit"]).describe("What to do."),
  path: pathInput,
  file_text: z.string().optional().describe("For create: the whole content of the new file."),
  old_str: z
    .string()
    .optional()
    .describe("For str_replace: the exact text to replace; it must occur exactly once."),
  new_str: z
    .string()
    .optional()
    .describe("For str_replace: the replacement (may be empty). For insert: the lines to insert."),
  insert_line: z
    .number()
    .int()
    .optional()
    .describe("For insert: insert after this line (0 = at the top, the line count = at the end)."),
  view_range: viewRangeInput,
  overwrite: overwriteInput,
  session_id: sessionIdInput,
};

const editorOutput = {
  output: z
    .string()
    .describe("What happened, with numbered lines: the view, or a snippet around the change."),
  path: z.string().describe("The real path in the box, symlinks resolved."),
  kind: z.enum(["file", "directory"]),
  total_lines: z.number().int().optional().describe("Lines in the file (view and undo)."),
  first_line: z.number().int().optional().describe("First line shown (view) or changed (edits)."),
  last_line: z.number().int().optional().describe("Last line shown (view) or changed (edits)."),
  truncated: z
    .boolean()
    .optional()
    .describe("True when the view left something out; the output says how to see it."),
  undo_steps: z.number().int().optional().describe("Edits of this file that undo can still revert."),
  encoding: z
    .enum(["latin1"])
    .optional()
    .describe("Set when the file is Latin-1 rather than UTF-8; edits keep it Latin-1."),
};

const COMMON_LIMITS =
  "Text files only (UTF-8, or Latin-1, which edits keep); files with NUL bytes are refused. Files over 8 MB can only be viewed in parts; edit them with bash. A view shows at most 2,000 lines or 256 KB and says how to see the rest.";

async function session(ctx: ToolContext, sessionId: string | undefined) {
  return ctx.services.sessions.resolve(ctx.clientId, sessionId, ctx.signal);
}

export const fileEditorTool = defineTool({
  name: "file_editor",
  replyText: textFirst("output"),
  title: "View and edit files in the session",
  description: [
    "View, create and edit text files in the session's /workspace (the repository copy in the box).",
    "Operations: view (a file with numbered lines, or a view_range; a directory two levels deep);",
    "create (a new file with content, parent directories made; an existing one only with overwrite);",
    "replace (old_string must match exactly once, whitespace included; the error says where it matched);",
    "insert (content after line_number; 0 is the top);",
    "undo (reverts this tool's last edit of the file, repeatedly).",
    "Edits return a numbered snippet around the change. View before editing so old_string is exact.",
    COMMON_LIMITS,
  ].join(" "),
  inputSchema: fileEditorInput,
  outputSchema: editorOutput,
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: false },
  async run(input, ctx) {
    const args = parseArgs(fileEditorInput, input, "file_editor");
    const { session_id, ...request } = args;
    return runEdit(await session(ctx, session_id), request, ctx.signal);
  },
});

const COMMANDS = {
  view: "view",
  create: "create",
  str_replace: "replace",
  insert: "insert",
  undo_edit: "undo",
} as const satisfies Record<string, EditOperation>;

export const strReplaceBasedEditTool = defineTool({
  name: "str_replace_based_edit_tool",
  replyText: textFirst("output"),
  title: "Text editor (str_replace)",
  description: [
    "The same editor as file_editor, with the parameter names of the common text-editor tool, working on the session's /workspace.",
    "Commands: view (a file with numbered lines, optionally a view_range; a directory two levels deep, hidden entries skipped);",
    "create (file_text becomes the new file; refuses an existing file unless overwrite is true);",
    "str_replace (old_str must occur exactly once; the error says how many times it did);",
    "insert (new_str after line insert_line; 0 inserts at the top);",
    "undo_edit (reverts this tool's last edit of the file).",
    "Edits return a numbered snippet around the change.",
    COMMON_LIMITS,
  ].join(" "),
  inputSchema: textEditorInput,
  outputSchema: editorOutput,
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: false },
  async run(input, ctx): Promise<EditResult> {
    const args = parseArgs(textEditorInput, input, "str_replace_based_edit_tool");
    const operation = COMMANDS[args.command];
    const request: EditRequest = {
      operation,
      path: args.path,
      content: operation === "insert" ? args.new_str : args.file_text,
      old_string: args.old_str,
      new_string: args.new_str,
      line_number: args.insert_line,
      view_range: args.view_range,
      overwrite: args.overwrite,
      names: TEXT_EDITOR_NAMES,
    };
    return runEdit(await session(ctx, args.session_id), request, ctx.signal);
  },
});
