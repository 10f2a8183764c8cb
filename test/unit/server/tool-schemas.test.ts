import { describe, expect, it } from "vitest";
import { errorText, toolClient } from "./registered-tools.js";

type Schema = { properties: Record<string, Record<string, unknown>> };

describe("tool input schemas", () => {
  it("say what the tools refuse: a view_range is a pair, aider needs at least one editable file", async () => {
    await using c = await toolClient();
    const { tools } = await c.listTools();
    const property = (tool: string, name: string) =>
      (tools.find((t) => t.name === tool)!.inputSchema as unknown as Schema).properties[name];
    for (const editor of ["file_editor", "str_replace_based_edit_tool"]) {
      expect(property(editor, "view_range"), editor).toMatchObject({ minItems: 2, maxItems: 2 });
    }
    expect(property("aider_ai_code", "relative_editable_files")).toMatchObject({ minItems: 1 });
    expect(property("aider_ai_code", "ai_coding_prompt")).toMatchObject({ minLength: 1 });
  });

  it("refuse a view_range that is not a pair before touching a session", async () => {
    await using c = await toolClient();
    const text = errorText(
      await c.callTool({ name: "file_editor", arguments: { operation: "view", path: "a", view_range: [3] } }),
    );
    expect(text).toBe(
      "view_range: must be a pair [start, end] of line numbers; end -1 means to the end of the file",
    );
  });

  it("leave the limits of session_create to the server, whose refusal names its real limit", async () => {
    await using c = await toolClient();
    const { tools } = await c.listTools();
    const create = tools.find((t) => t.name === "session_create")!.inputSchema as unknown as Schema;
    expect(create.properties.memory_mb).not.toHaveProperty("maximum");
    expect(create.properties.cpus).not.toHaveProperty("maximum");
  });
});
