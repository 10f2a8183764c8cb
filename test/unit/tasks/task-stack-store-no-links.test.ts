import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it, vi } from "vitest";
import { TaskStackStore } from "../../../src/tasks/task-stack-store.js";

// A file system without hard links (some network and FUSE mounts) answers link() with EPERM.
vi.mock("node:fs/promises", async (importOriginal) => {
  const actual = await importOriginal<typeof import("node:fs/promises")>();
  const link = async () => {
    throw Object.assign(new Error("EPERM: operation not permitted, link"), { code: "EPERM" });
  };
  return { ...actual, default: { ...actual, link }, link };
});

describe("TaskStackStore on a file system without hard links", () => {
  it("still keeps the previous file as .bak, by copying it", async () => {
    const dir = await mkdtemp(join(tmpdir(), "drydock-tasks-nolink-"));
    try {
      const stack = await new TaskStackStore({ dir }).open("s1");
      await stack.mutate((s) => s.createTask("first", ""));
      await stack.mutate((s) => s.createTask("second", ""));
      const backup = JSON.parse(await readFile(join(dir, "s1.json.bak"), "utf8"));
      expect(backup.state.tasks.map((t: { title: string }) => t.title)).toEqual(["first"]);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
