/**
 * json_editor: JSONPath views and edits of a JSON (or JSONC) file in the session's box. The file
 * is read, the selected values' text is changed on the host and the file written back with every
 * other byte as it was; any error leaves it as it was.
 */
import { z } from "zod";
import { LimitExceededError } from "../util/errors.js";
import { readFile, writeFile } from "./box-files.js";
import { jsonAdd, jsonRemove, jsonSet, jsonView } from "./edit/json-edit.js";
import { decodeTextFile, encodeTextFile } from "./edit/text-file.js";
import { MAX_EDIT_BYTES } from "./file-editor.js";
import { parseArgs } from "./parse-args.js";
import { defineTool } from "./tool.js";
import { sessionIdInput } from "./session-id-input.js";

const jsonEditorInput = {
  operation: z
    .enum(["view", "set", "add", "remove"])
    .describe(
      "view: show what json_path selects. set: replace every selected value with value. add: append value to the selected array(s), or create the missing last key of json_path. remove: delete every selected key or array item.",
    ),
  file_path: z
    .string()
    .describe(
      "The JSON file, absolute under /workspace or relative to it (package.json, /workspace/tsconfig.json).",
    ),
  json_path: z
    .string()
    .describe(
      "A JSONPath expression: $ is the whole document; $.a.b, $['key with space'], $.items[0], $.items[-1], $.items[0:2], $.*, $..name, $.items[?(@.enabled == true)].",
    ),
  value: z
    .unknown()
    .optional()
    .describe("For set and add: any JSON value (object, array, string, number, boolean or null)."),
  session_id: sessionIdInput,
};

export const jsonEditorTool = defineTool({
  name: "json_editor",
  title: "View and edit JSON files with JSONPath",
  description: [
    "Views and edits a JSON file (JSONC too: comments, trailing commas) in the session's /workspace by JSONPath. Only the selected values change; the rest of the file (layout, one-line objects, comments) stays byte for byte, and new values follow the file's indentation.",
    "Use it for configuration and manifest files (package.json, tsconfig.json, settings) instead of text replacement.",
    "Returns a message, the selected values (view) or the paths changed (set, add, remove).",
    "Invalid JSON in the file, a json_path that matches nothing, or a missing value gives an error and leaves the file unchanged.",
    "Files with a key twice in one object are refused for edits (which one is meant is unclear). Files up to 8 MB; a view returns at most 256 KB.",
  ].join(" "),
  inputSchema: jsonEditorInput,
  outputSchema: {
    output: z.string().describe("What happened; for view, the selected JSON as text."),
    file_path: z.string().describe("The real path in the box, symlinks resolved."),
    matches: z
      .array(z.object({ path: z.string(), value: z.unknown() }))
      .optional()
      .describe("view: each selected value with its normalised path."),
    changed_paths: z.array(z.string()).optional().describe("set, add, remove: the normalised paths changed."),
  },
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: false },
  async run(input, ctx) {
    const args = parseArgs(jsonEditorInput, input, "json_editor");
    const session = await ctx.services.sessions.resolve(ctx.clientId, args.session_id, ctx.signal);
    const read = await readFile(session.box, args.file_path, {
      maxBytes: MAX_EDIT_BYTES,
      field: "file_path",
      signal: ctx.signal,
    });
    if (read.truncated) {
      throw new LimitExceededError(
        `${read.path} is ${(read.size / 1024 / 1024).toFixed(1)} MB, over the ${MAX_EDIT_BYTES / 1024 / 1024} MB json_editor loads; use jq in bash for it`,
      );
    }
    const text = decodeTextFile(read.data, read.path);
    if (args.operation === "view") {
      const view = jsonView(text, args.json_path);
      return { output: view.text, file_path: read.path, matches: view.matches };
    }
    const edit =
      args.operation === "set"
        ? jsonSet(text, args.json_path, args.value)
        : args.operation === "add"
          ? jsonAdd(text, args.json_path, args.value)
          : jsonRemove(text, args.json_path);
    if (edit.text === text) {
      return {
        output: `${read.path} already held that; nothing was written.`,
        file_path: read.path,
        changed_paths: [],
      };
    }
    await writeFile(session.box, read.path, encodeTextFile(edit.text), {
      field: "file_path",
      signal: ctx.signal,
    });
    const verb = { set: "Set", add: "Added", remove: "Removed" }[args.operation];
    const listed = edit.changedPaths.slice(0, 20).join(", ");
    const more = edit.changedPaths.length > 20 ? ` and ${edit.changedPaths.length - 20} more` : "";
    return {
      output: `${verb} ${edit.changedPaths.length} value(s) in ${read.path}: ${listed}${more}.`,
      file_path: read.path,
      changed_paths: edit.changedPaths,
    };
  },
});
