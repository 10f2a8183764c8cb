import { mkdtemp, readdir, readFile, rm, stat, utimes, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { TaskStackStore } from "../../../src/tasks/task-stack-store.js";
import { InvalidArgumentError, TaskStackError } from "../../../src/util/errors.js";
import { tickingClock } from "./fixtures.js";

let dir: string;
let warnings: string[];

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "drydock-tasks-"));
  warnings = [];
});

afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

function newStore(): TaskStackStore {
  return new TaskStackStore({ dir, stack: { now: tickingClock() }, warn: (m) => warnings.push(m) });
}

/** Creates "root" › "child" in session s1 and returns the store. */
async function seeded(): Promise<TaskStackStore> {
  const store = newStore();
  const stack = await store.open("s1");
  await stack.mutate((s) => s.createTask("root", "root body"));
  await stack.mutate((s) => s.createTask("child", ""));
  return store;
}

const mainFile = () => join(dir, "s1.json");

describe("TaskStackStore", () => {
  it("opens an empty stack for a session with nothing stored, without writing a file", async () => {
    const stack = await newStore().open("fresh");
    expect(stack.read((s) => s.isZen)).toBe(true);
    expect(await readdir(dir)).toEqual([]);
  });

  it("saves after every change and reloads the same state in a new store", async () => {
    const first = await seeded();
    const before = (await first.open("s1")).read((s) => s.toState());
    const reopened = await newStore().open("s1");
    expect(reopened.read((s) => s.toState())).toEqual(before);
    expect(reopened.read((s) => s.currentTask()?.title)).toBe("child");
  });

  it("keeps the previous good file as .bak", async () => {
    await seeded();
    const backup = JSON.parse(await readFile(`${mainFile()}.bak`, "utf8"));
    expect(backup.state.tasks[0].subTasks).toEqual([]);
    const main = JSON.parse(await readFile(mainFile(), "utf8"));
    expect(main.state.tasks[0].subTasks).toHaveLength(1);
  });

  it("writes files only its user can read", async () => {
    await seeded();
    expect((await stat(mainFile())).mode & 0o777).toBe(0o600);
  });

  it("shares one stack per session and keeps sessions apart", async () => {
    const store = newStore();
    const a = await store.open("a");
    expect(await store.open("a")).toBe(a);
    await a.mutate((s) => s.createTask("in a", ""));
    const b = await store.open("b");
    expect(b.read((s) => s.tasks.length)).toBe(0);
  });

  it("runs concurrent changes to one stack one at a time, in call order", async () => {
    const stack = await newStore().open("s1");
    await stack.mutate((s) => s.createTask("root", ""));
    await Promise.all(
      Array.from({ length: 20 }, (_, i) => stack.mutate((s) => s.extendCurrentTask(`step ${i}`, ""))),
    );
    // The first step goes under the top-level task; each later one follows the step before it.
    const titles = stack.read((s) => s.tasks[0]!.subTasks.map((t) => t.title));
    expect(titles).toEqual(Array.from({ length: 20 }, (_, i) => `step ${i}`));
    const reloaded = await newStore().open("s1");
    expect(reloaded.read((s) => s.tasks[0]!.subTasks.length)).toBe(20);
  });

  it("leaves the state untouched when a change is refused", async () => {
    const store = await seeded();
    const stack = await store.open("s1");
    const before = stack.read((s) => s.toState());
    await expect(stack.mutate((s) => s.switchFocus("t42"))).rejects.toThrow(/no task "t42"/);
    expect(stack.read((s) => s.toState())).toEqual(before);
    // The queue goes on after a failure.
    await stack.mutate((s) => s.completeCurrentTask());
    expect(stack.read((s) => s.currentTask()?.title)).toBe("root");
  });

  it("reports a failed save and keeps the last saved state", async () => {
    const store = await seeded();
    const stack = await store.open("s1");
    const before = stack.read((s) => s.toState());
    await rm(dir, { recursive: true });
    await writeFile(dir, "a file where the directory was");
    await expect(stack.mutate((s) => s.completeCurrentTask())).rejects.toThrow(TaskStackError);
    await expect(stack.mutate((s) => s.completeCurrentTask())).rejects.toThrow(
      /could not save the task stack of session s1 .*the change was not applied/,
    );
    expect(stack.read((s) => s.toState())).toEqual(before);
    await rm(dir);
  });

  it("detects a damaged file, warns, moves it aside and uses the last good state from the backup", async () => {
    await seeded();
    await writeFile(mainFile(), '{"format": "drydock-task-stack", "version": 1, "sess');
    const stack = await newStore().open("s1");
    expect(stack.read((s) => s.tasks.map((t) => t.title))).toEqual(["root"]);
    expect(stack.read((s) => s.tasks[0]?.subTasks)).toEqual([]);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(
      /task stack file of session s1 is damaged \(not valid JSON.*last good state from its backup/,
    );
    const names = await readdir(dir);
    expect(names.some((n) => n.startsWith("s1.json.damaged-"))).toBe(true);
    // The backup still holds the good state, and the next change writes a sound main file.
    await stack.mutate((s) => s.createTask("again", ""));
    const reopened = await newStore().open("s1");
    expect(reopened.read((s) => s.currentTask()?.title)).toBe("again");
    expect(warnings).toHaveLength(1);
  });

  it("detects a hand edit that breaks the checksum", async () => {
    await seeded();
    const text = await readFile(mainFile(), "utf8");
    await writeFile(mainFile(), text.replace('"child"', '"kid"'));
    await newStore().open("s1");
    expect(warnings[0]).toMatch(/checksum mismatch/);
  });

  it("refuses to open when the file is damaged and there is no good backup, changing nothing", async () => {
    const store = newStore();
    await (await store.open("s1")).mutate((s) => s.createTask("only save", ""));
    await writeFile(mainFile(), "garbage");
    const error = await newStore()
      .open("s1")
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TaskStackError);
    expect((error as TaskStackError).code).toBe("task_stack_damaged");
    expect((error as Error).message).toMatch(
      /is damaged .* there is no backup\. Nothing was changed; move .* aside/,
    );
    expect(await readFile(mainFile(), "utf8")).toBe("garbage");
  });

  it("tries again on the next open after a failed load", async () => {
    await (await newStore().open("s1")).mutate((s) => s.createTask("x", ""));
    const text = await readFile(mainFile(), "utf8");
    await writeFile(mainFile(), "garbage");
    const store = newStore();
    await expect(store.open("s1")).rejects.toThrow(TaskStackError);
    await writeFile(mainFile(), text);
    expect((await store.open("s1")).read((s) => s.tasks.length)).toBe(1);
  });

  it("ignores and cleans up a truncated temp file left by a crash", async () => {
    await seeded();
    const good = await readFile(mainFile(), "utf8");
    const temp = `${mainFile()}.4242-deadbeef.tmp`;
    await writeFile(temp, good.slice(0, 40));
    const old = new Date(Date.now() - 3_600_000);
    await utimes(temp, old, old);
    const stack = await newStore().open("s1");
    expect(stack.read((s) => s.currentTask()?.title)).toBe("child");
    expect(warnings).toEqual([]);
    expect(await readdir(dir)).not.toContain("s1.json.4242-deadbeef.tmp");
  });

  it("does not restore a backup whose main file was deleted on purpose", async () => {
    await seeded();
    await rm(mainFile());
    const stack = await newStore().open("s1");
    expect(stack.read((s) => s.tasks)).toEqual([]);
    expect(await readdir(dir)).toEqual([]);
  });

  it("refuses a file that belongs to another session", async () => {
    await seeded();
    await writeFile(join(dir, "s2.json"), await readFile(mainFile(), "utf8"));
    await expect(newStore().open("s2")).rejects.toThrow(/belongs to session s1/);
  });

  it("keeps any session id inside its directory", async () => {
    const store = newStore();
    for (const id of ["../escape", "a/b", ".hidden", "..", "ünï cødé"]) {
      await (await store.open(id)).mutate((s) => s.createTask(id, ""));
    }
    const names = await readdir(dir);
    expect(names.filter((n) => n.endsWith(".json")).sort()).toEqual(
      [
        "%2E%2E.json",
        "%2Ehidden.json",
        "%2E%2E%2Fescape.json",
        "a%2Fb.json",
        "%C3%BCn%C3%AF%20c%C3%B8d%C3%A9.json",
      ].sort(),
    );
    expect((await store.list()).map((s) => s.sessionId)).toEqual(
      ["..", "../escape", ".hidden", "a/b", "ünï cødé"].sort(),
    );
  });

  it("refuses an empty or overlong session id", async () => {
    const store = newStore();
    await expect(store.open("")).rejects.toThrow(InvalidArgumentError);
    await expect(store.open("x".repeat(129))).rejects.toThrow(/session_id: must be 1 to 128/);
    await expect(store.open("a\nb")).rejects.toThrow(InvalidArgumentError);
    await expect(store.peek("")).rejects.toThrow(InvalidArgumentError);
  });

  it("lists stored stacks with counts, the current task and any problem", async () => {
    const store = await seeded();
    await (await store.open("s2")).mutate((s) => s.createTask("other", ""));
    await writeFile(join(dir, "s3.json"), "garbage");
    await writeFile(join(dir, "notes.txt"), "not a stack");
    const list = await store.list();
    expect(list.map((s) => [s.sessionId, s.tasks, s.open, s.currentTitle])).toEqual([
      ["s1", 2, 2, "child"],
      ["s2", 1, 1, "other"],
      ["s3", undefined, undefined, undefined],
    ]);
    expect(list[2]?.problem).toMatch(/damaged/);
  });

  it("lists nothing when the directory does not exist yet", async () => {
    expect(await new TaskStackStore({ dir: join(dir, "missing") }).list()).toEqual([]);
  });

  it("peeks without repairing: a damaged file stays where it is", async () => {
    const store = await seeded();
    await writeFile(mainFile(), "garbage");
    const peeked = await store.peek("s1");
    expect(peeked?.warning).toMatch(/damaged/);
    expect(peeked?.stack.tasks.map((t) => t.title)).toEqual(["root"]);
    expect(await readFile(mainFile(), "utf8")).toBe("garbage");
    expect(await store.peek("nothing-here")).toBeUndefined();
  });
});
