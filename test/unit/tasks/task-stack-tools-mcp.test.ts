import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { storeTaskStackAccess } from "../../../src/tasks/task-stack-access.js";
import { TaskStackStore } from "../../../src/tasks/task-stack-store.js";
import { taskStackTools } from "../../../src/tools/task-stack-tools.js";
import { registerTools } from "../../../src/server/register-tools.js";
import type { ToolServices } from "../../../src/tools/tool.js";
import { scenarioSteps, structureOf } from "./scenario-steps.js";

// The tools registered on the SDK's real server the way drydock's server does, and called by its
// real client: this checks that the schemas (including the recursive big-picture tree) survive
// JSON Schema conversion and that every result passes the SDK's output validation.
let dir: string;
let client: Client;

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "drydock-task-mcp-"));
  const store = new TaskStackStore({ dir, warn: () => undefined });
  const server = new McpServer({ name: "tasks-under-test", version: "0.0.0" });
  // With the output schemas listed, the SDK's client checks every reply against them.
  registerTools(
    server,
    taskStackTools,
    "c",
    { taskStacks: storeTaskStackAccess(store) } as ToolServices,
    undefined,
    { outputSchemas: true },
  );
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  client = new Client({ name: "test-client", version: "0.0.0" });
  await Promise.all([server.connect(serverSide), client.connect(clientSide)]);
});

afterEach(async () => {
  await client.close();
  await rm(dir, { recursive: true, force: true });
});

describe("task stack tools over MCP", () => {
  it("list with input and output schemas", async () => {
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual(taskStackTools.map((t) => t.name).sort());
    const create = tools.find((t) => t.name === "create_new_task");
    expect(create?.inputSchema.required?.sort()).toEqual(["body", "title"]);
    expect(tools.every((t) => t.outputSchema !== undefined)).toBe(true);
  });

  it("run the spec's flow with structured results that pass the SDK's validation", async () => {
    const call = async (name: string, args: Record<string, unknown> = {}) => {
      const result = await client.callTool({ name, arguments: args });
      expect(result.isError ?? false, JSON.stringify(result.content)).toBe(false);
      return result.structuredContent as Record<string, unknown>;
    };
    await call("create_new_task", { title: "Design new feature", body: "" });
    await call("create_new_task", { title: "Research requirements", body: "" });
    await call("extend_current_task", { title: "Analyze competitors", body: "" });
    await call("get_current_task");
    await call("peek_context", { include_body: true });
    await call("list_siblings");
    await call("get_stack_overview");
    const json = await call("get_big_picture", { format: "json" });
    expect(JSON.stringify(json.tasks)).toContain('"sub_tasks":[{"id":"t2"');
    await call("switch_focus", { task_id: "t2" });
    await call("update_current_task", { body: "notes" });
    await call("complete_current_task");
    await call("complete_current_task");
    await call("remove_task", { task_id: "t2" });
    await call("get_completed_tasks", { order: "logical" });
    expect((await call("complete_current_task")).zen).toBe(true);
    expect((await call("get_current_task")).zen).toBe(true);
    expect((await call("get_big_picture")).text).toBe(
      [
        "[t1] Design new feature (completed)",
        "  [t3] Analyze competitors (completed)",
        "(all tasks completed: zen state)",
      ].join("\n"),
    );
  });

  it("walk the spec's scenario, leaving the whole stack right after every step", async () => {
    const call = async (name: string, args: Record<string, unknown> = {}) => {
      const result = await client.callTool({ name, arguments: args });
      expect(result.isError ?? false, JSON.stringify(result.content)).toBe(false);
      return result.structuredContent as Record<string, unknown>;
    };
    for (const [i, step] of scenarioSteps.entries()) {
      const label = `step ${i + 1}: ${step.says}`;
      await call(step.tool, step.title === undefined ? {} : { title: step.title, body: "" });
      const picture = await call("get_big_picture");
      expect(String(picture.text).split("\n"), label).toEqual(step.outline);
      const overview = await call("get_stack_overview");
      const tasks = (overview.tasks as Array<Record<string, unknown>>).map((t) => ({
        id: t.id,
        parent_id: t.parent_id,
        depth: t.depth,
        status: t.status,
      }));
      expect(tasks, label).toEqual(structureOf(step.outline));
      const current = await call("get_current_task");
      expect((current.task as { title?: string } | undefined)?.title ?? null, label).toBe(step.current);
    }
  });

  it("turn a refused operation into an error result with the next step", async () => {
    const result = await client.callTool({ name: "complete_current_task", arguments: {} });
    expect(result.isError).toBe(true);
    expect(result.content).toEqual([
      {
        type: "text",
        text: "complete_current_task: no current task (zen state: the stack is empty); create one with create_new_task",
      },
    ]);
  });
});
