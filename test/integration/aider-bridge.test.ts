import { execFileSync, spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { AiderBridge, type StdioServerConfig } from "../../src/index.js";
import { spawnHttpServer, stopServer } from "../helpers/http-server.js";
import { tempRepo, type TempRepo } from "../helpers/repos.js";

// The AiderBridge against the real drydock server (the built CLI) and real boxes. The aider tools
// themselves are covered against a fake server in test/unit/client; here the bridge drives the
// workspace tools the server has, over both transports.
const cli = join(process.cwd(), "dist", "cli", "main.js");

/** The pids of this process's children running `drydock serve`. */
function servePids(): number[] {
  try {
    const out = execFileSync("pgrep", ["-P", String(process.pid), "-f", "main.js serve"], {
      encoding: "utf8",
    });
    return out.split("\n").filter(Boolean).map(Number);
  } catch {
    return [];
  }
}

describe("AiderBridge with drydock serve over stdio", () => {
  let repo: TempRepo;
  let state: string;
  let server: StdioServerConfig;

  beforeAll(() => {
    repo = tempRepo({ "src/app.py": "def main():\n    return 1\n" });
    state = mkdtempSync(join(tmpdir(), "drydock-state-"));
    server = {
      transport: "stdio",
      command: process.execPath,
      args: [cli, "serve", "--repo", repo.path, "--image", inject("sandboxImage"), "--tools", "all"],
      env: { DRYDOCK_STATE_DIR: state, DOCKER_HOST: process.env.DOCKER_HOST },
      stderr: "ignore",
    };
  });

  afterAll(() => {
    repo?.[Symbol.dispose]();
    rmSync(state, { recursive: true, force: true });
  });

  it("returns a tool's JSON reply in notes and a server error as FAILED", async () => {
    await using bridge = new AiderBridge({ server, repoPath: repo.path });
    const ran = await bridge.callAiderTool("bash", { command: "cat src/app.py && id -u" });
    expect(ran.status, ran.content).toBe("COMPLETE");
    expect(ran.notes).toMatchObject({ stdout: "def main():\n    return 1\n1000\n", exit_code: 0 });

    const missing = await bridge.callAiderTool("session_destroy", { session_id: "no-such-session" });
    expect(missing.status).toBe("FAILED");
    expect(missing.notes.failure).toBe("tool_error");
    expect(missing.content).toContain("session no-such-session not found");
  });

  it("times out a long command and stays usable", async () => {
    await using bridge = new AiderBridge({ server, repoPath: repo.path });
    const slow = await bridge.callAiderTool("bash", { command: "sleep 30" }, { timeoutMs: 3_000 });
    expect(slow.status).toBe("FAILED");
    expect(slow.notes.failure).toBe("timeout");
    const listed = await bridge.callAiderTool("session_list", {});
    expect(listed.status, listed.content).toBe("COMPLETE");
  });

  it("returns FAILED when the server is stopped mid-call, and starts a new one for the next call", async () => {
    await using bridge = new AiderBridge({ server, repoPath: repo.path });
    expect((await bridge.callAiderTool("session_list", {})).status).toBe("COMPLETE");
    const [pid] = servePids();
    expect(pid, "the drydock serve child process").toBeDefined();
    const pending = bridge.callAiderTool("bash", { command: "sleep 30" });
    setTimeout(() => process.kill(pid!, "SIGTERM"), 2_000);
    const result = await pending;
    expect(result.status).toBe("FAILED");
    expect(result.notes.failure).toBe("transport");
    expect(result.content).toContain("closed during the call");
    const again = await bridge.callAiderTool("session_list", {});
    expect(again.status, again.content).toBe("COMPLETE");
    expect(servePids()).not.toContain(pid);
  });
});

describe("AiderBridge with drydock serve over Streamable HTTP", () => {
  let repo: TempRepo;
  let state: string;
  let child: ReturnType<typeof spawn>;
  let url: string;
  const token = "bridge-token-" + Math.random().toString(36).slice(2);

  beforeAll(async () => {
    repo = tempRepo();
    state = mkdtempSync(join(tmpdir(), "drydock-state-"));
    ({ child, url } = await spawnHttpServer({
      repo: repo.path,
      env: { ...process.env, DRYDOCK_STATE_DIR: state, DRYDOCK_TOKEN: token },
    }));
  });

  afterAll(async () => {
    await stopServer(child);
    repo?.[Symbol.dispose]();
    rmSync(state, { recursive: true, force: true });
  });

  it("calls tools with the bearer token and reuses one connection", async () => {
    await using bridge = new AiderBridge({ server: { transport: "http", url, token }, repoPath: repo.path });
    const first = await bridge.callAiderTool("bash", { command: "echo one > marker.txt" });
    expect(first.status, first.content).toBe("COMPLETE");
    // The same MCP session means the same default box: the file written above is still there.
    const second = await bridge.callAiderTool("bash", { command: "cat marker.txt" });
    expect(second.notes.stdout).toBe("one\n");
  });

  it("reports a wrong token as a connect failure naming server.token", async () => {
    await using bridge = new AiderBridge({ server: { transport: "http", url, token: "wrong" } });
    const result = await bridge.callAiderTool("session_list", {});
    expect(result.status).toBe("FAILED");
    expect(result.notes.failure).toBe("connect");
    expect(result.content).toContain("server.token");
  });
});

describe("AiderBridge calling aider_ai_code on the real server with the offline model", () => {
  it("returns COMPLETE with the diff, and FAILED when aider cannot apply the edit", async () => {
    const state = mkdtempSync(join(tmpdir(), "drydock-state-"));
    const { readFileSync } = await import("node:fs");
    const sample = join(process.cwd(), "examples", "sample-repo");
    using repo = tempRepo({
      "greet.py": readFileSync(join(sample, "greet.py")),
      "test_greet.py": readFileSync(join(sample, "test_greet.py")),
    });
    try {
      const env: Record<string, string | undefined> = {
        DRYDOCK_STATE_DIR: state,
        DOCKER_HOST: process.env.DOCKER_HOST,
      };
      for (const key of [
        "OPENAI_API_KEY",
        "ANTHROPIC_API_KEY",
        "GEMINI_API_KEY",
        "GOOGLE_API_KEY",
        "DRYDOCK_MODEL",
      ])
        env[key] = "";
      await using bridge = new AiderBridge({
        server: {
          transport: "stdio",
          command: process.execPath,
          args: [
            ...[cli, "serve", "--repo", repo.path, "--image", inject("sandboxImage")],
            ...["--llm", "offline", "--tools", "core,aider"],
          ],
          env,
          stderr: "ignore",
        },
        repoPath: repo.path,
      });
      const ok = await bridge.callAiderTool("aider_ai_code", {
        ai_coding_prompt: "Make greet() greet with a comma and an exclamation mark",
        relative_editable_files: ["greet.py"],
      });
      expect(ok.status, ok.content).toBe("COMPLETE");
      expect(ok.notes.success).toBe(true);
      expect(ok.content).toMatch(/^diff --git a\/greet\.py b\/greet\.py/m);

      const stale = await bridge.callAiderTool("aider_ai_code", {
        ai_coding_prompt: "stale edit: change the farewell",
        relative_editable_files: ["greet.py"],
      });
      expect(stale.status).toBe("FAILED");
      expect(stale.notes.failure).toBe("success_false");
      expect(stale.content).toMatch(/SearchReplaceNoExactMatch|failed to match/);

      const models = await bridge.callAiderTool("list_models", { substring: "GPT-4O" });
      expect(models.status).toBe("COMPLETE");
      expect((models.notes.models as string[]).length).toBeGreaterThan(0);
    } finally {
      rmSync(state, { recursive: true, force: true });
    }
  });
});
