import { describe, expect, it } from "vitest";
import { Drydock } from "../../../src/library/drydock.js";
import { Sandbox } from "../../../src/library/sandbox.js";
import type {
  BackendRunOptions,
  CommandResult,
  SandboxBackend,
} from "../../../src/library/sandbox-backend.js";
import { InvalidArgumentError, SessionNotFoundError } from "../../../src/util/errors.js";

const done: CommandResult = {
  exitCode: 0,
  stdout: "",
  stderr: "",
  output: "",
  timedOut: false,
  truncated: false,
  restarted: false,
};

/** A backend that records what reached it; `lines` are streamed by run. */
function fakeBackend(lines: Array<[string, "stdout" | "stderr" | "output"]> = []) {
  const calls: string[] = [];
  const backend: SandboxBackend = {
    info: {
      id: "s1",
      repo: "/r",
      baseCommit: "c",
      image: "i",
      box: "b",
      commandTimeoutMs: 120_000,
      maxOutputBytes: 100_000,
    },
    run: async (command: string, options: BackendRunOptions) => {
      calls.push(`run ${command} ${options.timeoutMs}`);
      for (const [line, stream] of lines) options.onLine(line, stream);
      return done;
    },
    readText: async (path) => (calls.push(`read ${path}`), "text"),
    writeText: async (path) => void calls.push(`write ${path}`),
    list: async (path, depth) => (calls.push(`list ${path} ${depth}`), []),
    diff: async () => ({ diff: "", stat: "", baseCommit: "c" }),
    apply: async (target) => (
      calls.push(`apply ${JSON.stringify(target)}`),
      { mode: target.mode, files: [], stat: { filesChanged: 0, insertions: 0, deletions: 0 } }
    ),
    checkpoint: async (name) => {
      calls.push(`checkpoint ${name}`);
      return {
        name,
        createdAt: "",
        ageS: 0,
        bytes: 0,
        changedFiles: 0,
        includeIgnored: false,
        cwd: "/workspace",
      };
    },
    restore: async (name) => (calls.push(`restore ${name}`), { name, changedFiles: 0, cwd: "/workspace" }),
    checkpoints: async () => [],
    fork: async (n) => (calls.push(`fork ${n}`), []),
    close: async () => void calls.push("close"),
  };
  return { backend, calls };
}

async function refusal(promise: Promise<unknown>): Promise<InvalidArgumentError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(InvalidArgumentError);
  return error as InvalidArgumentError;
}

describe("Sandbox", () => {
  it("sends each streamed line to its stream's callback and to onOutput", async () => {
    const { backend } = fakeBackend([
      ["o", "stdout"],
      ["e", "stderr"],
      ["m", "output"],
    ]);
    const seen: string[] = [];
    await new Sandbox(backend).commands.run("x", {
      onStdout: (l) => seen.push(`stdout:${l}`),
      onStderr: (l) => seen.push(`stderr:${l}`),
      onOutput: (l, s) => seen.push(`any:${s}:${l}`),
    });
    expect(seen).toEqual(["stdout:o", "any:stdout:o", "stderr:e", "any:stderr:e", "any:output:m"]);
  });

  it("throws a callback's error once the command has ended, not in the middle of its stream", async () => {
    const { backend, calls } = fakeBackend([
      ["a", "stdout"],
      ["b", "stdout"],
    ]);
    const seen: string[] = [];
    const run = new Sandbox(backend).commands.run("x", {
      onStdout: (l) => {
        seen.push(l);
        throw new Error("callback broke");
      },
    });
    await expect(run).rejects.toThrow("callback broke");
    expect(seen).toEqual(["a", "b"]);
    expect(calls).toEqual(["run x undefined"]);
  });

  it("refuses bad input naming the field, before anything reaches the box", async () => {
    const { backend, calls } = fakeBackend();
    const box = new Sandbox(backend);
    expect((await refusal(box.commands.run("x", { timeoutMs: 0 }))).field).toBe("timeoutMs");
    expect((await refusal(box.commands.run("x", { timeoutMs: 1.5 }))).field).toBe("timeoutMs");
    expect((await refusal(box.files.read(""))).field).toBe("path");
    expect((await refusal(box.files.write("a", 3 as unknown as string))).field).toBe("text");
    expect((await refusal(box.files.list(".", { depth: 0 }))).field).toBe("depth");
    expect((await refusal(box.apply({ worktree: true, branch: "b" } as never))).field).toBe("branch");
    expect((await refusal(box.apply({ worktree: false } as never))).field).toBe("worktree");
    expect((await refusal(box.apply({ branch: " " }))).field).toBe("branch");
    expect((await refusal(box.apply({ branch: "b", allowIgnoreChanges: true } as never))).field).toBe(
      "allowIgnoreChanges",
    );
    expect(calls).toEqual([]);
  });

  it("applies as a branch by default and to the working tree when asked", async () => {
    const { backend, calls } = fakeBackend();
    const box = new Sandbox(backend);
    await box.apply();
    await box.apply({ branch: "b", replaceBranch: true });
    await box.apply({ worktree: true });
    await box.apply({ worktree: true, allowIgnoreChanges: true });
    expect(calls).toEqual([
      'apply {"mode":"branch"}',
      'apply {"mode":"branch","branch":"b","replaceBranch":true}',
      'apply {"mode":"worktree"}',
      'apply {"mode":"worktree","allowIgnoreChanges":true}',
    ]);
  });

  it("closes once, on close or await using, and is then a session that is not found", async () => {
    const { backend, calls } = fakeBackend();
    let closed = 0;
    let box: Sandbox;
    {
      await using inner = new Sandbox(backend, () => closed++);
      box = inner;
    }
    await box.close();
    expect(calls).toEqual(["close"]);
    expect(closed).toBe(1);
    await expect(box.files.read("a")).rejects.toBeInstanceOf(SessionNotFoundError);
    await expect(box.commands.run("true")).rejects.toMatchObject({ code: "session_not_found" });
  });
});

describe("Drydock", () => {
  it("refuses a URL that is not http(s), naming url", () => {
    expect(() => Drydock.remote({ url: "localhost:8765" })).toThrow(/^url: /);
    expect(() => Drydock.remote({ url: "ftp://h/mcp" })).toThrow(InvalidArgumentError);
  });

  it("refuses bad create options naming the field, before it reaches an engine", async () => {
    const drydock = Drydock.local();
    expect((await refusal(drydock.create({ timeoutMs: 10 }))).field).toBe("timeoutMs");
    expect((await refusal(drydock.create({ memoryMB: 64 }))).field).toBe("memoryMB");
    expect((await refusal(drydock.create({ cpus: 0 }))).field).toBe("cpus");
    expect((await refusal(drydock.create({ repo: "" }))).field).toBe("repo");
    expect((await refusal(drydock.create({ ref: " " }))).field).toBe("ref");
  });
});
