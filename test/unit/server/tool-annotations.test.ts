import { describe, expect, it } from "vitest";
import { toolClient } from "./registered-tools.js";

describe("tool annotations", () => {
  it("carries an annotation of each kind on every tool", async () => {
    await using c = await toolClient();
    const { tools: listed } = await c.listTools();
    for (const tool of listed) {
      const a = tool.annotations ?? {};
      expect(typeof a.readOnlyHint, tool.name).toBe("boolean");
      if (!a.readOnlyHint) expect(typeof a.destructiveHint, tool.name).toBe("boolean");
      expect(typeof a.openWorldHint, tool.name).toBe("boolean");
    }
    const byName = new Map(listed.map((t) => [t.name, t.annotations]));
    expect(byName.get("session_apply")).toMatchObject({ readOnlyHint: false, destructiveHint: true });
    expect(byName.get("aider_ai_code")).toMatchObject({ openWorldHint: true });
    for (const name of ["git_diff", "session_diff", "session_list", "get_big_picture", "list_models"]) {
      expect(byName.get(name), name).toMatchObject({ readOnlyHint: true });
    }
  });
});
