/**
 * What a file tool calls the editor's parameters and operations, so each tool's messages name its
 * own: file_editor's `old_string` is str_replace_based_edit_tool's `old_str`.
 */
export interface EditorNames {
  /** The parameter that picks the operation. */
  readonly operation: string;
  readonly create: string;
  readonly replace: string;
  readonly insert: string;
  readonly undo: string;
  /** The whole text of a create. */
  readonly fileText: string;
  /** The lines an insert adds. */
  readonly insertText: string;
  readonly oldString: string;
  readonly newString: string;
  readonly lineNumber: string;
}

export const FILE_EDITOR_NAMES: EditorNames = {
  operation: "operation",
  create: "create",
  replace: "replace",
  insert: "insert",
  undo: "undo",
  fileText: "content",
  insertText: "content",
  oldString: "old_string",
  newString: "new_string",
  lineNumber: "line_number",
};

export const TEXT_EDITOR_NAMES: EditorNames = {
  operation: "command",
  create: "create",
  replace: "str_replace",
  insert: "insert",
  undo: "undo_edit",
  fileText: "file_text",
  insertText: "new_str",
  oldString: "old_str",
  newString: "new_str",
  lineNumber: "insert_line",
};
