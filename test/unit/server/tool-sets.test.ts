import { describe, expect, it } from "vitest";
import { instructionsFor } from "../../../src/server/drydock-server.js";
import { pickTools, TOOL_SETS, toolSetsFlag } from "../../../src/tools/tool-sets.js";
import { everyTool, toolClient } from "./registered-tools.js";

const names = (sets: string[]) => pickTools(everyTool, sets).map((t) => t.name);

describe("tool sets (serve --tools)", () => {
  it("serves every tool by default, as before the flag existed", () => {
    expect(names(["all"])).toEqual(everyTool.map((t) => t.name));
    expect(pickTools(everyTool).map((t) => t.name)).toEqual(everyTool.map((t) => t.name));
  });

  it("minimal is the sessions, bash, one editor and git_diff", () => {
    expect(names(["minimal"])).toEqual([
      "session_create",
      "session_list",
      "session_destroy",
      "session_diff",
      "session_apply",
      "bash",
      "file_editor",
      "git_diff",
    ]);
  });

  it("joins sets and single tool names, in the server's order, each tool once", () => {
    expect(names(["tasks", "minimal", "json_editor", "git_diff"])).toEqual([
      ...names(["minimal"]).slice(0, 7),
      "json_editor",
      "git_diff",
      ...TOOL_SETS.tasks!,
    ]);
  });

  it("names every tool in some set other than all", () => {
    const inSets = new Set(Object.values(TOOL_SETS).flat());
    expect(everyTool.filter((t) => !inSets.has(t.name)).map((t) => t.name)).toEqual([]);
  });

  it("refuses an unknown name, listing the sets", () => {
    expect(() => toolSetsFlag("minimal,shel", everyTool)).toThrow(
      /^--tools: "shel" is neither a tool set nor a tool of this server; sets are minimal, sessions, shell, edit, thinking, aider, tasks, all/,
    );
    expect(() => toolSetsFlag(" , ", everyTool)).toThrow(/^--tools: names no tool set/);
    expect(toolSetsFlag(" minimal , tasks ", everyTool)).toEqual(["minimal", "tasks"]);
  });

  it("lists a much smaller tools/list for minimal than for all", async () => {
    const size = async (sets: string[]) => {
      await using c = await toolClient(pickTools(everyTool, sets));
      return JSON.stringify((await c.listTools()).tools).length;
    };
    const all = await size(["all"]);
    const minimal = await size(["minimal"]);
    expect(minimal).toBeLessThan(all / 3);
  });

  it("gives instructions that name only tools the server lists", () => {
    const minimal = instructionsFor(pickTools(everyTool, ["minimal"]));
    expect(minimal).toContain("bash");
    expect(minimal).not.toMatch(/aider|create_new_task/);
    const tasks = instructionsFor(pickTools(everyTool, ["tasks"]));
    expect(tasks).not.toMatch(/bash|session_apply|file_editor/);
    expect(tasks).toContain("create_new_task");
    expect(instructionsFor(everyTool)).toMatch(
      /bash.*file_editor.*aider_ai_code.*session_apply.*create_new_task/,
    );
  });
});
