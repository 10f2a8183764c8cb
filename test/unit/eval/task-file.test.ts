import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { taskHash } from "../../../src/eval/eval-task.js";
import { loadTasks } from "../../../src/eval/task-file.js";

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "drydock-tasks-"));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const line = (o: Record<string, unknown>) =>
  JSON.stringify({ repo: "repos/app", prompt: "fix", test_cmd: "make test", ...o });

describe("loadTasks", () => {
  it("resolves host paths against the file's folder, leaves URLs alone and reads patch files", async () => {
    writeFileSync(join(dir, "gold.diff"), "diff --git a/x b/x\n");
    writeFileSync(
      join(dir, "tasks.jsonl"),
      [
        line({ id: "a", patch_file: "gold.diff" }),
        line({ id: "b", repo: "https://example.com/r.git" }),
        line({ id: "c", repo: "/abs/repo", patch_file: "missing.diff" }),
        line({ id: "d", patch: "x", patch_file: "gold.diff" }),
      ].join("\n"),
    );
    const loaded = await loadTasks(join(dir, "tasks.jsonl"));
    expect(loaded.tasks.map((t) => [t.id, t.repo, t.patch])).toEqual([
      ["a", join(dir, "repos/app"), "diff --git a/x b/x\n"],
      ["b", "https://example.com/r.git", undefined],
    ]);
    expect(loaded.tasks[0]!.patch_file).toBeUndefined();
    expect(loaded.tasks[0]!.source).toMatch(/tasks\.jsonl:1$/);
    expect(loaded.problems.map((p) => [p.line, p.field])).toEqual([
      [3, "patch_file"],
      [4, "patch_file"],
    ]);
  });

  it("reads every YAML file of a directory in name order", async () => {
    mkdirSync(join(dir, "set"));
    writeFileSync(join(dir, "set", "b.yaml"), "id: b\nrepo: ../r\nprompt: p\ntest_cmd: t\n");
    writeFileSync(
      join(dir, "set", "a.yml"),
      "- id: a1\n  repo: r\n  prompt: p\n  test_cmd: t\n- id: a2\n  repo: r\n  prompt: p\n",
    );
    writeFileSync(join(dir, "set", "notes.txt"), "not a task");
    const loaded = await loadTasks(join(dir, "set"));
    expect(loaded.tasks.map((t) => [t.id, t.repo])).toEqual([
      ["a1", join(dir, "set", "r")],
      ["b", join(dir, "r")],
    ]);
    expect(loaded.problems).toHaveLength(1);
    expect(loaded.problems[0]).toMatchObject({ line: 5, field: "test_cmd" });
  });

  it("says what to give when the path is missing or an empty directory", async () => {
    await expect(loadTasks(join(dir, "nope.jsonl"))).rejects.toThrow(/TASKS: .* does not exist/);
    await expect(loadTasks(dir)).rejects.toThrow(/holds no \.yaml or \.yml file/);
  });

  it("hashes a task's content regardless of key order, so a changed task runs again", () => {
    const a = { id: "a", repo: "r", prompt: "p", test_cmd: "t" };
    expect(taskHash(a)).toBe(taskHash({ test_cmd: "t", prompt: "p", repo: "r", id: "a" }));
    expect(taskHash(a)).not.toBe(taskHash({ ...a, test_cmd: "t2" }));
  });
});
