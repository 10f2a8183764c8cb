/**
 * `drydock sessions checkpoint|restore|checkpoints|fork` from another process while `drydock
 * serve --keep-sessions` runs: one list of checkpoints for both, and forks the server takes up
 * with session_resume.
 */
import { execFile } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { LABEL_STATE } from "../../src/engine/labels.js";
import { failure, ok } from "../helpers/mcp-client.js";
import { tempRepo, type TempRepo } from "../helpers/repos.js";
import { testEngine } from "../helpers/sessions.js";

const cli = join(process.cwd(), "dist", "cli", "main.js");

describe("drydock sessions checkpoint, restore, checkpoints and fork", () => {
  let repo: TempRepo;
  let state: string;
  let client: Client;
  let id: string;

  async function drydock(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
    try {
      const { stdout, stderr } = await promisify(execFile)(process.execPath, [cli, ...args], {
        env: { ...process.env, DRYDOCK_STATE_DIR: state },
      });
      return { code: 0, stdout, stderr };
    } catch (error) {
      const e = error as { code: number; stdout: string; stderr: string };
      return { code: e.code, stdout: e.stdout, stderr: e.stderr };
    }
  }
  const call = async (name: string, args: Record<string, unknown>) =>
    ok(await client.callTool({ name, arguments: { session_id: id, ...args } }));
  const cat = async (path: string, session = id) =>
    (await call("bash", { session_id: session, command: `cat ${path}` })).stdout;

  beforeAll(async () => {
    repo = tempRepo({ "README.md": "hello\n" });
    state = mkdtempSync(join(tmpdir(), "drydock-state-"));
    client = new Client({ name: "verbs", version: "1" });
    await client.connect(
      new StdioClientTransport({
        command: process.execPath,
        args: [
          cli,
          "serve",
          ...["--repo", repo.path, "--image", inject("sandboxImage"), "--pool", "0"],
          ...["--keep-sessions", "--tools", "all"],
        ],
        env: { ...process.env, DRYDOCK_STATE_DIR: state } as Record<string, string>,
        stderr: "ignore",
      }),
    );
    id = ok(await client.callTool({ name: "session_create", arguments: {} })).session_id as string;
  });

  afterAll(async () => {
    await client?.close();
    // Kept boxes outlive their server by design: this test's state directory holds only its own.
    const engine = await testEngine();
    for (const box of await engine.listBoxes(LABEL_STATE, state)) await engine.remove(box.id);
    repo?.[Symbol.dispose]();
    if (state) rmSync(state, { recursive: true, force: true });
  });

  it("shares one list with the server, restores files and git, and forks sessions the server takes up", async () => {
    await call("bash", { command: "echo one > README.md && git commit -qam one && cd /tmp" });
    await call("session_checkpoint", { name: "by-tool", message: "from the server" });
    await call("bash", { command: "echo two > /workspace/README.md" });

    const saved = await drydock("sessions", "checkpoint", id.slice(0, 6), "by-cli", "-m", "from the CLI");
    expect(saved.code, saved.stderr).toBe(0);
    expect(saved.stdout).toMatch(/^saved checkpoint by-cli: 1 changed file\(s\)/);

    const listed = await drydock("sessions", "checkpoints", id, "--json");
    expect(JSON.parse(listed.stdout)).toMatchObject([
      { name: "by-tool", message: "from the server", cwd: "/tmp" },
      { name: "by-cli", message: "from the CLI" },
    ]);
    const tools = ok(await client.callTool({ name: "session_checkpoints", arguments: { session_id: id } }));
    expect((tools.checkpoints as Array<{ name: string }>).map((c) => c.name)).toEqual(["by-tool", "by-cli"]);

    const restored = await drydock("sessions", "restore", id, "by-tool");
    expect(restored.code, restored.stderr).toBe(0);
    expect(restored.stdout).toMatch(
      /^restored checkpoint by-tool: 1 path\(s\) written or removed; the shell was left/,
    );
    expect(await cat("/workspace/README.md")).toBe("one\n");
    await call("session_restore", { name: "by-cli" });
    expect(await cat("/workspace/README.md")).toBe("two\n");

    const bad = await drydock("sessions", "checkpoint", id, "../x");
    expect(bad.code).not.toBe(0);
    expect(bad.stderr).toMatch(/name: "..\/x" is not a checkpoint name/);

    const forked = await drydock("sessions", "fork", id, "-n", "2", "--checkpoint", "by-tool");
    expect(forked.code, forked.stderr).toBe(0);
    const lines = forked.stdout.trim().split("\n");
    expect(lines).toHaveLength(2);
    const [forkId, secret] = lines[0]!.split(" ");
    const resumed = ok(
      await client.callTool({
        name: "session_resume",
        arguments: { session_id: forkId, session_secret: secret },
      }),
    );
    expect(resumed.session_id).toBe(forkId);
    expect(await cat("README.md", forkId)).toBe("one\n");
    // The shell is a process: the server takes the fork up with a new one, in /workspace.
    expect((await call("bash", { session_id: forkId, command: "pwd; git log --format=%s -1" })).stdout).toBe(
      "/workspace\none\n",
    );
    // Not without its secret.
    const [otherId] = lines[1]!.split(" ");
    expect(
      failure(await client.callTool({ name: "bash", arguments: { session_id: otherId, command: "true" } })),
    ).toMatch(/not found/);
  });
});
