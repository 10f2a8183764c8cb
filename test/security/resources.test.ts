/**
 * Resource exhaustion inside a box: full disks, a million small files, output without end, binary
 * output, the box's own streams. Each is contained by the box's limits, the caller gets a clear result, and other boxes
 * and the host go on. (Fork and memory bombs are in test/integration/hardening.test.ts.)
 */
import { execFileSync } from "node:child_process";
import { existsSync, statSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { failure, inMemoryDrydock, ok, type InMemoryDrydock } from "../helpers/mcp-client.js";
import { tempRepo, type TempRepo } from "../helpers/repos.js";
import { boxRuntime } from "../helpers/runtime.js";

/**
 * What the box has written to the host's disk: its writable layer, as the engine counts it. (Not
 * the host's free space: other processes on a busy machine write too.)
 */
const boxDiskBytes = (box: string): number =>
  Number(
    execFileSync("docker", ["inspect", "--size", "--format", "{{.SizeRw}}", box], {
      encoding: "utf8",
    }).trim(),
  );

describe("resource exhaustion", () => {
  let repo: TempRepo;
  let drydock: InMemoryDrydock;

  beforeAll(async () => {
    repo = tempRepo({ "README.md": "hello\n" });
    drydock = await inMemoryDrydock({ repo: repo.path });
  });

  afterAll(async () => {
    await drydock?.[Symbol.asyncDispose]();
    repo?.[Symbol.dispose]();
  });

  const bash = async (sessionId: string, command: string, timeout_s?: number) =>
    ok(
      await drydock.client.callTool(
        { name: "bash", arguments: { command, session_id: sessionId, ...(timeout_s ? { timeout_s } : {}) } },
        undefined,
        { timeout: 170_000 },
      ),
    );
  const boxes = new Map<string, string>();
  const newSession = async () => {
    const created = ok(await drydock.client.callTool({ name: "session_create", arguments: {} }));
    boxes.set(created.session_id as string, created.box as string);
    return created.session_id as string;
  };

  it("fills /workspace, /tmp, the home directory and /dev/shm: writes stop at their caps, the diff says why, others go on", async () => {
    const [id, other] = await Promise.all([newSession(), newSession()]);
    const diskBefore = boxDiskBytes(boxes.get(id)!);
    for (const dir of ["/workspace", "/tmp", "/home/agent", "/dev/shm"]) {
      const r = await bash(id, `dd if=/dev/zero of=${dir}/fill bs=1M 2>&1; df -m ${dir} | tail -1`);
      expect(r.stdout, dir).toMatch(/No space left on device/);
      expect(r.stdout, dir).toMatch(/ 100% /);
    }
    // The host's disk did not pay for it (the caps are in memory, counted against the box).
    expect(boxDiskBytes(boxes.get(id)!) - diskBefore).toBeLessThan(1024 * 1024);
    expect((await bash(other, "echo fine")).stdout).toBe("fine\n");
    // With /tmp full the diff cannot refresh its index there, and says so.
    const full = failure(
      await drydock.client.callTool({ name: "session_diff", arguments: { session_id: id } }),
    );
    expect(full).toMatch(/taking the diff out of the box failed .*(space|write)/is);
    await bash(
      id,
      "rm -f /workspace/fill /tmp/fill /home/agent/fill /dev/shm/fill && echo more >> README.md",
    );
    const diff = ok(await drydock.client.callTool({ name: "session_diff", arguments: { session_id: id } }));
    expect(diff.diff).toContain("+more");
  });

  it("what the box writes to its own first process's stdout and stderr lands on no host disk", async () => {
    const id = await newSession();
    const box = boxes.get(id)!;
    const diskBefore = boxDiskBytes(box);
    // The box's init holds the streams the engine would log; the agent's uid owns it.
    const r = await bash(
      id,
      "for fd in 1 2; do head -c 4000000 /dev/zero | tr '\\0' x > /proc/1/fd/$fd; echo \"fd $fd: $?\"; done",
    );
    // The writes themselves succeed, under runc and gVisor alike: the engine reads and drops them.
    expect(r.stdout).toBe("fd 1: 0\nfd 2: 0\n");
    const inspect = (format: string) =>
      execFileSync("docker", ["inspect", "--format", format, box], { encoding: "utf8" }).trim();
    expect(inspect("{{.HostConfig.LogConfig.Type}}")).toBe("none");
    const logPath = inspect("{{.LogPath}}");
    expect(logPath === "" || !existsSync(logPath) || statSync(logPath).size === 0, logPath).toBe(true);
    expect(boxDiskBytes(box) - diskBefore).toBeLessThan(1024 * 1024);
  });

  it("a file the box made unreadable stops the diff with git's reason", async () => {
    const id = await newSession();
    await bash(id, "echo secret > locked && chmod 000 locked");
    const refused = failure(
      await drydock.client.callTool({ name: "session_diff", arguments: { session_id: id } }),
    );
    expect(refused).toMatch(/locked.*Permission denied/s);
  });

  it("a million small files stay in the box: the diff refuses to carry them, clearly, and the box goes quickly", async () => {
    const id = await newSession();
    // gVisor's file system makes files about ten times slower: 150,000 there, named with 100 more
    // characters, still a diff far over the 20 MiB cap (each empty new file is about 90 bytes of
    // diff, and twice its name more).
    const runsc = boxRuntime() === "runsc";
    const dirs = runsc ? 150 : 1000;
    const prefix = runsc ? "x".repeat(100) : "";
    const made = await bash(
      id,
      `python3 -c '\nimport os\nfor d in range(${dirs}):\n  p = f"many/{d}"; os.makedirs(p)\n  for i in range(1000): open(f"{p}/${prefix}{i}", "w").close()\n' && find many -type f | wc -l`,
      150,
    );
    expect(made.stdout).toBe(`${dirs * 1000}\n`);
    const started = Date.now();
    const refused = failure(
      await drydock.client.callTool({ name: "session_diff", arguments: { session_id: id } }, undefined, {
        timeout: 170_000,
      }),
    );
    expect(refused).toMatch(/the diff is larger than \d+ bytes; remove generated or large files/);
    console.log(`a million files: the diff was refused in ${Date.now() - started} ms`);
    const removing = Date.now();
    ok(await drydock.client.callTool({ name: "session_destroy", arguments: { session_id: id } }));
    console.log(`a million files: the session was removed in ${Date.now() - removing} ms`);
    // At most 8 s for the last diff, then the box; session_diff's stat is not left queued.
    expect(Date.now() - removing).toBeLessThan(30_000);
    // Under gVisor making the files takes about half a minute and the diff about 50 s (with
    // 300,000 files the diff passed its own 120 s limit on a slow day); the end keeps the
    // session's last diff (at most 8 s): past the suite's 180 s on two busy cores.
  }, 360_000);

  it("output without end stops at the time limit, capped, and binary output comes back as valid text", async () => {
    const id = await newSession();
    const endless = await bash(id, "yes drydock", 3);
    expect(endless).toMatchObject({ timed_out: true, truncated: true, exit_code: null });
    expect((endless.stdout as string).length).toBeLessThan(100_000 + 1_000);
    expect(endless.stdout).toMatch(/bytes of output cut/);
    const binary = await bash(id, "head -c 3000000 /dev/urandom; echo; echo END");
    expect(binary).toMatchObject({ exit_code: 0, truncated: true });
    expect((binary.stdout as string).trimEnd().endsWith("END")).toBe(true);
    expect(binary.stdout).not.toMatch(/[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]/);
    expect((await bash(id, "echo still")).stdout).toBe("still\n");
  });
});
