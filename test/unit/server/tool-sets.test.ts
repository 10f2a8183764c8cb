import { describe, expect, it } from "vitest";
import { instructionsFor } from "../../../src/server/drydock-server.js";
import {
  DEFAULT_TOOL_SETS,
  defaultToolSets,
  pickTools,
  TOOL_SETS,
  toolSetsFlag,
} from "../../../src/tools/tool-sets.js";
import { everyTool, toolClient } from "./registered-tools.js";

const names = (sets: string[]) => pickTools(everyTool, sets).map((t) => t.name);

/** The bytes of the `tools/list` reply for these sets, as bench/tool-list.mjs counts them. */
async function listBytes(sets: string[]): Promise<number> {
  await using c = await toolClient(pickTools(everyTool, sets));
  return Buffer.byteLength(JSON.stringify({ tools: (await c.listTools()).tools }));
}

/** 12 KB: what the default list may cost a model's context on every request. */
const DEFAULT_LIST_MAX_BYTES = 12 * 1024;

/** The tools the documents drydock was specified from name, by document. */
const SPECIFIED_TOOLS = {
  workspace: [
    "bash",
    "file_editor",
    "json_editor",
    "code_search",
    "git_diff",
    "sequential_thinking",
    "task_done",
  ],
  aider: ["aider_ai_code", "list_models"],
  tasks: [
    "create_new_task",
    "extend_current_task",
    "get_current_task",
    "get_big_picture",
    "complete_current_task",
    "get_completed_tasks",
    "update_current_task",
    "get_stack_overview",
    "peek_context",
    "list_siblings",
    "switch_focus",
    "remove_task",
  ],
};

describe("tool sets (serve --tools)", () => {
  it("serves core by default: a box, bash, file_editor, code_search, git_diff and task_done", () => {
    expect(DEFAULT_TOOL_SETS).toEqual(["core"]);
    expect(pickTools(everyTool).map((t) => t.name)).toEqual([
      "session_create",
      "session_destroy",
      "session_diff",
      "session_apply",
      "bash",
      "task_done",
      "file_editor",
      "code_search",
      "git_diff",
    ]);
  });

  it("keeps the default tools/list within 12 KB, with session_resume too", async () => {
    expect(await listBytes(DEFAULT_TOOL_SETS)).toBeLessThanOrEqual(DEFAULT_LIST_MAX_BYTES);
    expect(await listBytes(defaultToolSets(true))).toBeLessThanOrEqual(DEFAULT_LIST_MAX_BYTES);
  });

  it("lists output schemas only when asked (serve --output-schemas)", async () => {
    const core = pickTools(everyTool, DEFAULT_TOOL_SETS);
    await using plain = await toolClient(core);
    expect((await plain.listTools()).tools.filter((t) => t.outputSchema !== undefined)).toEqual([]);
    await using full = await toolClient(core, {}, { outputSchemas: true });
    const listed = (await full.listTools()).tools;
    expect(listed.map((t) => [t.name, t.outputSchema?.type])).toEqual(core.map((t) => [t.name, "object"]));
  });

  it("adds session_resume to the default of a server that keeps sessions", () => {
    expect(defaultToolSets(false)).toEqual(["core"]);
    expect(names(defaultToolSets(true))).toEqual([
      ...names(["core"]).slice(0, 4),
      "session_resume",
      ...names(["core"]).slice(4),
    ]);
  });

  it("still reaches every tool with all", () => {
    expect(names(["all"])).toEqual(everyTool.map((t) => t.name));
  });

  it.each(Object.entries(SPECIFIED_TOOLS))(
    "reaches each %s tool the specification names through --tools",
    (_, tools) => {
      for (const tool of tools) {
        expect(names(toolSetsFlag(tool, everyTool)), tool).toEqual([tool]);
        const sets = Object.keys(TOOL_SETS).filter((set) => set !== "all" && TOOL_SETS[set]!.includes(tool));
        expect(sets, `a set holding ${tool}`).not.toEqual([]);
      }
    },
  );

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
      /^--tools: "shel" is neither a tool set nor a tool of this server; sets are core, minimal, sessions, checkpoints, shell, edit, thinking, aider, tasks, all/,
    );
    expect(() => toolSetsFlag(" , ", everyTool)).toThrow(/^--tools: names no tool set/);
    expect(toolSetsFlag(" minimal , tasks ", everyTool)).toEqual(["minimal", "tasks"]);
  });

  it("lists a much smaller tools/list for core and minimal than for all", async () => {
    const all = await listBytes(["all"]);
    expect(await listBytes(["core"])).toBeLessThan(all / 3);
    expect(await listBytes(["minimal"])).toBeLessThan(all / 3);
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
