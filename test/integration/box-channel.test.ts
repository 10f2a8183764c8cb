import { createHash } from "node:crypto";
import type { Readable } from "node:stream";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BOX_CHANNEL_NAME, boxSh, openBoxChannel } from "../../src/sandbox/box-channel.js";
import type { Session } from "../../src/session/session.js";
import { SessionManager } from "../../src/session/session-manager.js";
import { codeSearchTool } from "../../src/tools/code-search-tool.js";
import { runEdit } from "../../src/tools/file-editor.js";
import type { ToolServices } from "../../src/tools/tool.js";
import { CommandTimeoutError } from "../../src/util/errors.js";
import { tempRepo, type TempRepo } from "../helpers/repos.js";
import { sandboxImage, testEngine, testSession } from "../helpers/sessions.js";

/** Counts the execs the engine starts in one container while `body` runs. */
async function execsDuring(containerId: string, body: () => Promise<void>): Promise<number> {
  const engine = await testEngine();
  const events = (await engine.docker.getEvents({
    filters: { container: [containerId], event: ["exec_create"] },
  })) as Readable;
  let count = 0;
  events.on("data", (chunk: Buffer) => {
    count += chunk
      .toString("utf8")
      .split("\n")
      .filter((line) => line.includes("exec_create")).length;
  });
  try {
    // The engine's event stream is live from its first byte: give it a moment to be attached.
    await new Promise((r) => setTimeout(r, 300));
    await body();
    await new Promise((r) => setTimeout(r, 500));
  } finally {
    events.destroy();
  }
  return count;
}

describe("the box channel", () => {
  let repo: TempRepo;
  let session: Session;
  beforeAll(async () => {
    repo = tempRepo({ "a.txt": "one\ntwo\nthree\n" });
    session = await testSession(repo.path);
    // A box's first request starts the channel (and runs as an exec); these tests are about what
    // comes after.
    expect(await openBoxChannel(session.box)).toBe(true);
  });
  afterAll(async () => {
    await session?.destroy();
    repo?.[Symbol.dispose]();
  });

  it("serves file_editor view and replace, diffs and code_search without starting an exec", async () => {
    // The counter must see an exec when one is made, or its zero below means nothing.
    expect(await execsDuring(session.box.id, async () => void (await session.box.sh("true")))).toBe(1);
    const execs = await execsDuring(session.box.id, async () => {
      for (let i = 0; i < 3; i++) {
        await runEdit(session, { operation: "view", path: "a.txt" });
        await runEdit(session, { operation: "replace", path: "a.txt", old_string: "two", new_string: "TWO" });
        await runEdit(session, { operation: "replace", path: "a.txt", old_string: "TWO", new_string: "two" });
      }
      expect(await session.diff()).toBe("");
      const search = (await codeSearchTool.run(
        { command: "search_function", identifier: "nothing_here" },
        {
          clientId: "test",
          signal: new AbortController().signal,
          progress: () => undefined,
          services: { sessions: { resolve: async () => session } } as unknown as ToolServices,
        },
      )) as { total: number };
      expect(search.total).toBe(0);
    });
    expect(execs).toBe(0);
  });

  it("runs scripts with stdin, exit codes, stderr and capped output as an exec does", async () => {
    const bytes = Buffer.from(Array.from({ length: 256 * 64 }, (_, i) => i % 256));
    const echoed = await boxSh(session.box, 'cat; echo "$1" >&2; exit 7', ["to stderr"], { stdin: bytes });
    expect(echoed.exitCode).toBe(7);
    expect(echoed.stdout.equals(bytes)).toBe(true);
    expect(echoed.stderr.toString("utf8")).toBe("to stderr\n");
    expect(echoed.truncated).toBe(false);

    const capped = await boxSh(session.box, "seq 1 100000", [], { maxOutputBytes: 1000 });
    expect(capped.exitCode).toBe(0);
    expect(capped.stdout.length).toBe(1000);
    expect(capped.truncated).toBe(true);

    // A large answer, in many of the engine's frames, arrives whole beside a small one.
    const [large, small] = await Promise.all([
      boxSh(session.box, "{ head -c 24000000 /dev/urandom | tee /dev/fd/3 | sha256sum >&2; } 3>&1", [], {
        maxOutputBytes: 32_000_000,
      }),
      boxSh(session.box, "echo small"),
    ]);
    expect(large.stdout.length).toBe(24_000_000);
    expect(large.stderr.toString("utf8")).toBe(
      `${createHash("sha256").update(large.stdout).digest("hex")}  -\n`,
    );
    expect(small.stdout.toString("utf8")).toBe("small\n");
  });

  it("answers a quick request while a slow one runs, and stops a timed-out one with its children", async () => {
    const slow = boxSh(session.box, "sleep 5; echo slow", []);
    const started = Date.now();
    const quick = await boxSh(session.box, "echo quick");
    expect(quick.stdout.toString("utf8")).toBe("quick\n");
    expect(Date.now() - started).toBeLessThan(4_000);
    expect((await slow).stdout.toString("utf8")).toBe("slow\n");

    await expect(
      boxSh(session.box, "(sleep 47; touch /tmp/late) & sleep 48", [], { timeoutMs: 500 }),
    ).rejects.toBeInstanceOf(CommandTimeoutError);
    await new Promise((r) => setTimeout(r, 500));
    const left = await session.bash("ps -eo args | grep -E '^sleep 4[78]' || echo none");
    expect(left.output).toBe("none\n");

    const controller = new AbortController();
    const cancelled = boxSh(session.box, "sleep 46", [], { signal: controller.signal });
    setTimeout(() => controller.abort(), 300);
    await expect(cancelled).rejects.toThrow(/cancelled/);
    await new Promise((r) => setTimeout(r, 500));
    expect((await session.bash("ps -eo args | grep -E '^sleep 46' || echo none")).output).toBe("none\n");
  });

  it("shows under its own name, and file tools keep working when the agent kills it", async () => {
    const listed = await session.bash(`ps -eo args | grep -c '^${BOX_CHANNEL_NAME} '`);
    expect(listed.output).toBe("1\n");
    // Not dumpable: the agent, the same user, cannot reach its pipes through /proc.
    const fds = await session.bash(
      `ls /proc/$(pgrep -f '^${BOX_CHANNEL_NAME} ')/fd/ 2>&1 >/dev/null; ls /proc/$$/fd/ | head -1`,
    );
    expect(fds.output).toMatch(/^ls: cannot open directory .*: Permission denied\n0\n$/);
    await session.bash(`pkill -f '^${BOX_CHANNEL_NAME} '; sleep 0.5`);
    const view = await runEdit(session, { operation: "view", path: "a.txt" });
    expect(view.output).toContain("two");
    expect(await openBoxChannel(session.box)).toBe(true);
    // The next operation has a channel again: no exec for it.
    const execs = await execsDuring(session.box.id, async () => {
      await runEdit(session, { operation: "view", path: "a.txt" });
    });
    expect(execs).toBe(0);
  });
});

describe("a new session's first file operation", () => {
  it("starts no exec: the channel runs before the session is handed out, cold or from the warm pool", async () => {
    using repo = tempRepo({ "a.txt": "one\ntwo\n" });
    const manager = await SessionManager.start(await testEngine(), {
      pool: { size: 1, ttlMs: 600_000, profile: { image: sandboxImage() } },
    });
    try {
      await manager.pool!.full();
      const warm = await manager.create({ repo: repo.path, image: sandboxImage() });
      const cold = await testSession(repo.path);
      try {
        expect([warm.warm, cold.warm]).toEqual([true, false]);
        for (const session of [warm, cold]) {
          // The counter sees an exec when one is made, or its zero below would mean nothing.
          expect(await execsDuring(session.box.id, async () => void (await session.box.sh("true")))).toBe(1);
          const execs = await execsDuring(session.box.id, async () => {
            expect((await runEdit(session, { operation: "view", path: "a.txt" })).output).toContain("two");
            expect(await session.diff()).toBe("");
          });
          expect(execs).toBe(0);
        }
      } finally {
        await cold.destroy();
      }
    } finally {
      await manager.closeAll();
    }
  });
});
