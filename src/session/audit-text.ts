/**
 * What an audit entry's call was asked, as one line of text (the command, the file, the model…):
 * shared by `drydock sessions log` and the live page. Pure.
 */

function str(value: unknown): string {
  if (value === undefined || value === null) return "";
  return typeof value === "string" ? value : JSON.stringify(value);
}

/** The arguments a call was given, as text a person reads. */
export function auditArgsText(tool: string, args: Record<string, unknown> | undefined): string {
  const a = args ?? {};
  switch (tool) {
    case "bash":
    case "person_command":
      return str(a.command);
    case "file_editor":
      return `${str(a.operation)} ${str(a.path)}`;
    case "str_replace_based_edit_tool":
      return `${str(a.command)} ${str(a.path)}`;
    case "json_editor":
      return `${str(a.operation)} ${str(a.file_path)} ${str(a.json_path)}`.trim();
    case "aider_ai_code": {
      const files = Array.isArray(a.relative_editable_files) ? a.relative_editable_files.join(" ") : "";
      return `${a.model ? `[${str(a.model)}] ` : ""}${files}: ${str(a.ai_coding_prompt)}`;
    }
    case "llm_request":
      return `${str(a.provider)} ${str(a.model) || "(model not named)"}`;
    case "session_start":
      return `${str(a.repo)} on ${str(a.image)}`;
    default:
      return Object.entries(a)
        .filter(([key, value]) => key !== "session_id" && value !== undefined)
        .map(([key, value]) => `${key}=${str(value)}`)
        .join(" ");
  }
}
