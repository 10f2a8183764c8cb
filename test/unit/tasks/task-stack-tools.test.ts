import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { storeTaskStackAccess, type TaskStackAccess } from "../../../src/tasks/task-stack-access.js";
import { TaskStackStore } from "../../../src/tasks/task-stack-store.js";
import { taskStackTools } from "../../../src/tools/task-stack-tools.js";
import type { AnyToolDefinition, ToolContext, ToolServices } from "../../../src/tools/tool.js";
import { InvalidArgumentError, NotFoundError, TaskStackError } from "../../../src/util/errors.js";
import { tickingClock } from "./fixtures.js";

let dir: string;
let store: TaskStackStore;
let ctx: ToolContext;

function contextFor(taskStacks: TaskStackAccess): ToolContext {
  return {
    clientId: "client-1",
    signal: new AbortController().signal,
    progress: () => undefined,
    services: { taskStacks } as ToolServices,
  };
}

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "drydock-task-tools-"));
  store = new TaskStackStore({ dir, stack: { now: tickingClock() }, warn: () => undefined });
  ctx = contextFor(storeTaskStackAccess(store));
});

afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

function tool(name: string): AnyToolDefinition {
  const found = taskStackTools.find((t) => t.name === name);
  if (!found) throw new Error(`no tool ${name}`);
  return found;
}

/** Calls a tool the way the server does: arguments and result both checked against the schemas. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
async function call(name: string, args: Record<string, unknown> = {}, context = ctx): Promise<any> {
  const t = tool(name);
  const parsed = z.strictObject(t.inputSchema).parse(args);
  const result = await t.run(parsed, context);
  return z.strictObject(t.outputSchema).parse(result);
}

describe("task stack tools", () => {
  it("are the twelve tools of the spec, each with a model-facing description and an optional session_id", () => {
    expect(taskStackTools.map((t) => t.name)).toEqual([
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
    ]);
    for (const t of taskStackTools) {
      expect(t.description.length, t.name).toBeGreaterThan(150);
      expect(t.inputSchema.session_id?.safeParse(undefined).success, t.name).toBe(true);
      expect(() => z.toJSONSchema(z.object(t.inputSchema)), t.name).not.toThrow();
      expect(() => z.toJSONSchema(z.object(t.outputSchema)), t.name).not.toThrow();
    }
  });

  it("create_new_task starts a top-level task in zen state, then nests under the current task", async () => {
    expect(await call("create_new_task", { title: "Design", body: "the goal" })).toEqual({
      task_id: "t1",
      title: "Design",
      message: 'created t1 "Design" at the top level; it is now the current task',
      is_current: true,
      parent_task_id: null,
      depth: 1,
    });
    expect(await call("create_new_task", { title: "Research", body: "" })).toMatchObject({
      task_id: "t2",
      is_current: true,
      parent_task_id: "t1",
      depth: 2,
      message: 'created t2 "Research" under t1 "Design"; it is now the current task',
    });
  });

  it("extend_current_task adds the next step at the current level", async () => {
    await call("create_new_task", { title: "Design", body: "" });
    await call("create_new_task", { title: "Interview", body: "" });
    expect(await call("extend_current_task", { title: "Analyze", body: "" })).toMatchObject({
      task_id: "t3",
      is_current: true,
      parent_task_id: "t1",
      depth: 2,
    });
  });

  it("extend_current_task in zen state says to use create_new_task", async () => {
    const error = await call("extend_current_task", { title: "x", body: "" }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TaskStackError);
    expect((error as TaskStackError).code).toBe("no_current_task");
    expect((error as Error).message).toBe(
      "extend_current_task: no current task (zen state: the stack is empty); create one with create_new_task",
    );
  });

  it("refuses a bad title with the field named", async () => {
    for (const title of ["", "x".repeat(257)]) {
      const error = await call("create_new_task", { title, body: "" }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(InvalidArgumentError);
      expect((error as InvalidArgumentError).field).toBe("title");
    }
  });

  it("get_current_task shows the task, depth, siblings to the left and the breadcrumb", async () => {
    await call("create_new_task", { title: "Design", body: "" });
    await call("create_new_task", { title: "Interview", body: "" });
    await call("extend_current_task", { title: "Analyze", body: "compare three tools" });
    const result = await call("get_current_task");
    expect(result).toMatchObject({
      zen: false,
      task: {
        id: "t3",
        title: "Analyze",
        body: "compare three tools",
        status: "current",
        completed_at: null,
      },
      depth: 2,
      siblings_to_left: [{ id: "t2", title: "Interview", status: "pending" }],
      breadcrumb: [
        { id: "t1", title: "Design", status: "pending" },
        { id: "t3", title: "Analyze", status: "current" },
      ],
    });
  });

  it("get_current_task answers in zen state without an error", async () => {
    expect(await call("get_current_task")).toEqual({
      zen: true,
      message: "no current task (zen state: the stack is empty); start one with create_new_task",
    });
    await call("create_new_task", { title: "only", body: "" });
    await call("complete_current_task");
    expect((await call("get_current_task")).message).toBe(
      "no current task (zen state: all 1 tasks are completed); start new work with create_new_task",
    );
  });

  it("get_big_picture gives the outline as text by default and the tree as JSON on request", async () => {
    await call("create_new_task", { title: "Design", body: "" });
    await call("create_new_task", { title: "Research", body: "" });
    expect(await call("get_big_picture")).toEqual({
      format: "text",
      zen: false,
      current_task_id: "t2",
      text: "[t1] Design (pending)\n  [t2] Research (current) <-- YOU ARE HERE",
    });
    const json = await call("get_big_picture", { format: "json" });
    expect(json.text).toBeUndefined();
    expect(json.tasks[0]).toMatchObject({
      id: "t1",
      is_current: false,
      sub_tasks: [{ id: "t2", is_current: true }],
    });
  });

  it("complete_current_task says where focus went, down to zen", async () => {
    await call("create_new_task", { title: "Design", body: "" });
    await call("create_new_task", { title: "Research", body: "" });
    expect(await call("complete_current_task")).toEqual({
      completed_task_id: "t2",
      message: 'completed t2 "Research"; focus moved to t1 "Design"',
      current_task_id: "t1",
      current_task_title: "Design",
      zen: false,
    });
    expect(await call("complete_current_task")).toMatchObject({
      completed_task_id: "t1",
      current_task_id: null,
      zen: true,
      message: 'completed t1 "Design"; no open task is left: zen state',
    });
    await expect(call("complete_current_task")).rejects.toThrow(/no current task \(zen state: all 2 tasks/);
  });

  it("complete_current_task refuses a parent with open sub-tasks", async () => {
    await call("create_new_task", { title: "Design", body: "" });
    await call("create_new_task", { title: "Research", body: "" });
    await call("switch_focus", { task_id: "t1" });
    await expect(call("complete_current_task")).rejects.toThrow(/sub-tasks are open \(t2 "Research"\)/);
  });

  it("get_completed_tasks returns the archive in either order, chronological by default", async () => {
    await call("create_new_task", { title: "Design", body: "d" });
    await call("create_new_task", { title: "Research", body: "r" });
    await call("complete_current_task");
    await call("complete_current_task");
    const chronological = await call("get_completed_tasks");
    expect(chronological).toMatchObject({ order: "chronological", count: 2 });
    expect(chronological.tasks.map((t: { id: string }) => t.id)).toEqual(["t2", "t1"]);
    expect(chronological.tasks[0]).toEqual({
      id: "t2",
      title: "Research",
      body: "r",
      created_at: "2026-01-01T00:00:01.000Z",
      completed_at: "2026-01-01T00:00:02.000Z",
    });
    const logical = await call("get_completed_tasks", { order: "logical" });
    expect(logical.tasks.map((t: { id: string }) => t.id)).toEqual(["t1", "t2"]);
  });

  it("update_current_task overwrites the body only", async () => {
    await call("create_new_task", { title: "Design", body: "old" });
    expect(await call("update_current_task", { body: "new notes" })).toEqual({
      task_id: "t1",
      message: 'updated the body of t1 "Design" (9 characters)',
    });
    expect((await call("get_current_task")).task).toMatchObject({ title: "Design", body: "new notes" });
  });

  it("get_stack_overview lists every task with ids for navigation", async () => {
    await call("create_new_task", { title: "Design", body: "" });
    await call("create_new_task", { title: "Research", body: "" });
    const overview = await call("get_stack_overview");
    expect(overview.counts).toEqual({ total: 2, open: 2, completed: 0, archived: 0 });
    expect(overview.tasks.map((t: { id: string; parent_id: string | null }) => [t.id, t.parent_id])).toEqual([
      ["t1", null],
      ["t2", "t1"],
    ]);
  });

  it("peek_context shows the parent and the task just before, bodies on request", async () => {
    await call("create_new_task", { title: "Design", body: "why" });
    await call("create_new_task", { title: "Interview", body: "who" });
    await call("extend_current_task", { title: "Analyze", body: "" });
    const peek = await call("peek_context");
    expect(peek).toMatchObject({
      current_task_id: "t3",
      parent_context: { id: "t1", title: "Design", status: "pending" },
      immediate_context: { id: "t2", title: "Interview" },
    });
    expect(peek.parent_context.body).toBeUndefined();
    const withBody = await call("peek_context", { include_body: true });
    expect(withBody.parent_context.body).toBe("why");
    expect(withBody.immediate_context.body).toBe("who");
  });

  it("peek_context has nulls for a single task and refuses zen state", async () => {
    await expect(call("peek_context")).rejects.toThrow(/peek_context: no current task/);
    await call("create_new_task", { title: "single", body: "" });
    expect(await call("peek_context")).toEqual({
      current_task_id: "t1",
      parent_context: null,
      immediate_context: null,
    });
  });

  it("list_siblings counts the tasks to the left and shows those to the right", async () => {
    await call("create_new_task", { title: "Design", body: "" });
    await call("create_new_task", { title: "A", body: "" });
    await call("extend_current_task", { title: "B", body: "" });
    await call("extend_current_task", { title: "C", body: "" });
    await call("switch_focus", { task_id: "t3" });
    const siblings = await call("list_siblings", { include_body: true });
    expect(siblings.count).toBe(1);
    expect(siblings.siblings).toEqual([
      {
        id: "t2",
        title: "A",
        status: "pending",
        created_at: expect.any(String),
        completed_at: null,
        body: "",
      },
    ]);
    expect(siblings.siblings_to_right.map((t: { id: string }) => t.id)).toEqual(["t4"]);
  });

  it("switch_focus moves focus and reports the path", async () => {
    await call("create_new_task", { title: "Design", body: "" });
    await call("create_new_task", { title: "A", body: "" });
    await call("extend_current_task", { title: "B", body: "" });
    expect(await call("switch_focus", { task_id: "t2" })).toEqual({
      task_id: "t2",
      title: "A",
      previous_task_id: "t3",
      message: 'focus moved to t2 "A"; t3 "B" stays open',
      focus_path: [
        { id: "t1", title: "Design", status: "pending" },
        { id: "t2", title: "A", status: "current" },
      ],
    });
    expect((await call("switch_focus", { task_id: "t2" })).message).toBe(
      't2 "A" was already the current task',
    );
  });

  it("switch_focus refuses completed, removed and unknown tasks", async () => {
    await call("create_new_task", { title: "Design", body: "" });
    await call("create_new_task", { title: "A", body: "" });
    await call("complete_current_task");
    await expect(call("switch_focus", { task_id: "t2" })).rejects.toThrow(/completion is permanent/);
    await call("create_new_task", { title: "B", body: "" });
    await call("remove_task", { task_id: "t3" });
    await expect(call("switch_focus", { task_id: "t3" })).rejects.toThrow(NotFoundError);
    await expect(call("switch_focus", { task_id: "t3" })).rejects.toThrow(/was removed with remove_task/);
    await expect(call("switch_focus", { task_id: "t99" })).rejects.toThrow(/no task "t99"/);
  });

  it("remove_task removes a subtree and moves focus off it", async () => {
    await call("create_new_task", { title: "Design", body: "" });
    await call("create_new_task", { title: "A", body: "" });
    await call("create_new_task", { title: "A.1", body: "" });
    expect(await call("remove_task", { task_id: "t2" })).toEqual({
      removed_task_id: "t2",
      removed_task_ids: ["t2", "t3"],
      removed_count: 2,
      message: 'removed t2 "A" and 1 sub-task(s); focus moved to t1 "Design"',
      current_task_id: "t1",
      zen: false,
    });
    await call("create_new_task", { title: "B", body: "" });
    expect((await call("remove_task", { task_id: "t1" })).zen).toBe(true);
  });

  it("remove_task keeps focus when it was elsewhere", async () => {
    await call("create_new_task", { title: "Design", body: "" });
    await call("create_new_task", { title: "A", body: "" });
    await call("extend_current_task", { title: "B", body: "" });
    expect((await call("remove_task", { task_id: "t2" })).message).toBe(
      'removed t2 "A"; focus stays on t3 "B"',
    );
  });

  it("keeps a stack per session; an omitted session_id means the default one", async () => {
    await call("create_new_task", { title: "in default", body: "" });
    await call("create_new_task", { title: "in s2", body: "", session_id: "s2" });
    expect((await call("get_current_task")).task.title).toBe("in default");
    expect((await call("get_current_task", { session_id: "s2" })).task.title).toBe("in s2");
    expect((await call("get_current_task", { session_id: "default" })).task.title).toBe("in default");
  });

  it("asks the server's access service for the stack, with the calling client", async () => {
    const asked: Array<[string, string | undefined]> = [];
    const access: TaskStackAccess = {
      open: (clientId, sessionId) => {
        asked.push([clientId, sessionId]);
        return store.open(`${clientId}:${sessionId ?? "main"}`);
      },
    };
    await call("create_new_task", { title: "x", body: "", session_id: "s9" }, contextFor(access));
    await call("get_big_picture", {}, contextFor(access));
    expect(asked).toEqual([
      ["client-1", "s9"],
      ["client-1", undefined],
    ]);
    expect((await store.list()).map((s) => s.sessionId)).toEqual(["client-1:s9"]);
  });

  it("saves every change: a new store sees what the tools did", async () => {
    await call("create_new_task", { title: "Design", body: "" });
    await call("create_new_task", { title: "Research", body: "" });
    await call("complete_current_task");
    const reopened = new TaskStackStore({ dir });
    const peeked = await reopened.peek("default");
    expect(peeked?.stack.currentTask()?.title).toBe("Design");
    expect(peeked?.stack.completedTasks("chronological").map((t) => t.id)).toEqual(["t2"]);
  });
});
