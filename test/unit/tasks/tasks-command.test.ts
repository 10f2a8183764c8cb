import { Command, CommanderError } from "commander";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { registerTasksCommand } from "../../../src/cli/tasks-command.js";
import { describeError } from "../../../src/util/errors.js";
import { TaskStackStore } from "../../../src/tasks/task-stack-store.js";
import { tickingClock } from "./fixtures.js";

let dir: string;

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "drydock-tasks-cli-"));
});

afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function drydock(...args: string[]): Promise<{ out: string; err: string; exitCode: number }> {
  let out = "";
  let err = "";
  const program = new Command("drydock")
    .exitOverride()
    .configureOutput({ writeOut: (s) => void (out += s), writeErr: (s) => void (err += s) });
  registerTasksCommand(program);
  try {
    await program.parseAsync(["node", "drydock", ...args, "--dir", dir]);
    return { out, err, exitCode: 0 };
  } catch (error) {
    if (error instanceof CommanderError) return { out, err, exitCode: error.exitCode };
    // As the CLI's entry point prints a thrown error: one line, exit code 1.
    return { out, err: err + `drydock: ${describeError(error)}\n`, exitCode: 1 };
  }
}

async function seed(sessionId: string, titles: string[], start = Date.UTC(2026, 0, 1)): Promise<void> {
  const store = new TaskStackStore({ dir, stack: { now: tickingClock(start) } });
  const stack = await store.open(sessionId);
  for (const title of titles) await stack.mutate((s) => s.createTask(title, ""));
}

describe("drydock tasks", () => {
  it("show prints a session's outline with a header", async () => {
    await seed("s1", ["Design", "Research"]);
    const { out, exitCode } = await drydock("tasks", "show", "s1");
    expect(exitCode).toBe(0);
    const [header, blank, ...outline] = out.trimEnd().split("\n");
    expect(header).toMatch(/^session s1: 2 tasks, 2 open, saved \d{4}-/);
    expect(blank).toBe("");
    expect(outline).toEqual(["[t1] Design (pending)", "  [t2] Research (current) <-- YOU ARE HERE"]);
  });

  it("show --json prints the tree", async () => {
    await seed("s1", ["Design"]);
    const { out } = await drydock("tasks", "show", "s1", "--json");
    expect(JSON.parse(out)).toMatchObject({
      session_id: "s1",
      zen: false,
      current_task_id: "t1",
      tasks: [{ id: "t1", title: "Design", is_current: true, sub_tasks: [] }],
    });
  });

  it("show without a session picks the most recently saved stack", async () => {
    await seed("older", ["old"]);
    await new Promise((resolve) => setTimeout(resolve, 5));
    await seed("newer", ["new"]);
    const { out } = await drydock("tasks", "show");
    expect(out).toMatch(/^session newer:/);
  });

  it("show says clearly when a session has no stack, and fails", async () => {
    const { err, exitCode } = await drydock("tasks", "show", "nope");
    expect(exitCode).toBe(1);
    expect(err).toMatch(
      /session nope has no stored task stack in .*; list stored stacks with `drydock tasks list`/,
    );
    const none = await drydock("tasks", "show");
    expect(none.exitCode).toBe(1);
    expect(none.err).toMatch(/no task stacks stored in/);
  });

  it("show reports a damaged stack with no backup", async () => {
    await writeFile(join(dir, "bad.json"), "garbage");
    const { err, exitCode } = await drydock("tasks", "show", "bad");
    expect(exitCode).toBe(1);
    expect(err).toMatch(/cannot be read: .* is damaged/);
  });

  it("show warns and prints the backup when the main file is damaged", async () => {
    await seed("s1", ["Design", "Research"]);
    await writeFile(join(dir, "s1.json"), "garbage");
    const { out, err, exitCode } = await drydock("tasks", "show", "s1");
    expect(exitCode).toBe(0);
    expect(err).toMatch(/^warning: task stack file of session s1 is damaged/);
    expect(out).toContain("[t1] Design (current) <-- YOU ARE HERE");
  });

  it("list shows sessions with counts and the current task", async () => {
    await seed("s1", ["Design", "Research"]);
    await seed("s2", ["Other"]);
    const { out } = await drydock("tasks", "list");
    const lines = out.trimEnd().split("\n");
    expect(lines[0]).toMatch(/^SESSION\s+TASKS\s+OPEN\s+SAVED\s+CURRENT$/);
    expect(lines[1]).toMatch(/^s1\s+2\s+2\s+\S+\s+Research$/);
    expect(lines[2]).toMatch(/^s2\s+1\s+1\s+\S+\s+Other$/);
  });

  it("list --json and an empty directory", async () => {
    expect((await drydock("tasks", "list")).out).toMatch(/^no task stacks stored in /);
    await seed("s1", ["Design"]);
    expect(JSON.parse((await drydock("tasks", "list", "--json")).out)).toEqual([
      {
        session_id: "s1",
        saved_at: expect.any(String),
        tasks: 1,
        open: 1,
        current_task_title: "Design",
        problem: null,
      },
    ]);
  });
});
