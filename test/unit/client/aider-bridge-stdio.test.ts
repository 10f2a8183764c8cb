import { afterEach, describe, expect, it } from "vitest";
import { AiderBridge, type AiderProgress } from "../../../src/index.js";
import { fakeStdioServer, processAlive, waitFor } from "./fixtures.js";

const open: AiderBridge[] = [];
function bridgeFor(options: ConstructorParameters<typeof AiderBridge>[0]): AiderBridge {
  const bridge = new AiderBridge(options);
  open.push(bridge);
  return bridge;
}
afterEach(async () => {
  await Promise.all(open.splice(0).map((bridge) => bridge.close()));
});

async function serverPid(bridge: AiderBridge): Promise<number> {
  const result = await bridge.callAiderTool("whoami", {});
  expect(result.status).toBe("COMPLETE");
  return result.notes.pid as number;
}

const prompt = { ai_coding_prompt: "rename x to y", relative_editable_files: ["src/a.ts"] };

describe("AiderBridge over stdio", () => {
  it("returns COMPLETE with the diff as content and the server's extra fields in notes", async () => {
    const bridge = bridgeFor({ server: fakeStdioServer("success") });
    const result = await bridge.callAiderTool("aider_ai_code", prompt);
    expect(result.status).toBe("COMPLETE");
    expect(result.content).toContain("diff --git a/src/a.ts b/src/a.ts");
    expect(result.notes).toMatchObject({
      success: true,
      model: "fake/alpha-coder",
      editable_files: ["src/a.ts"],
    });
  });

  it("parses the seed server's text-only JSON reply", async () => {
    const bridge = bridgeFor({ server: fakeStdioServer("text_only") });
    const result = await bridge.callAiderTool("aider_ai_code", prompt);
    expect(result).toMatchObject({ status: "COMPLETE", notes: { success: true } });
    expect(result.content).toContain("+++ b/src/a.ts");
  });

  it("returns list_models' models in notes", async () => {
    const bridge = bridgeFor({ server: fakeStdioServer("success") });
    const result = await bridge.callAiderTool("list_models", { substring: "CODER" });
    expect(result).toEqual({
      status: "COMPLETE",
      content: "fake/alpha-coder\nfake/beta-coder",
      notes: { models: ["fake/alpha-coder", "fake/beta-coder"] },
    });
  });

  it("puts another tool's reply in notes, preferring structuredContent", async () => {
    const bridge = bridgeFor({ server: fakeStdioServer("success") });
    const result = await bridge.callAiderTool("echo", { value: { a: 1 } });
    expect(result).toMatchObject({
      status: "COMPLETE",
      notes: { via: "structured", echoed: { value: { a: 1 } } },
    });
  });

  it.each([
    ["success_false", "success_false", 'replied "success": false: SEARCH block did not match'],
    ["error_key", "error_key", "reported an error: model fake/none is not available"],
    ["is_error", "tool_error", "reported a tool error: relative_editable_files: ../etc/passwd is outside"],
    ["malformed", "invalid_reply", "not valid JSON"],
  ] as const)("returns FAILED when the server answers %s", async (mode, failure, message) => {
    const bridge = bridgeFor({ server: fakeStdioServer(mode) });
    const result = await bridge.callAiderTool("aider_ai_code", prompt);
    expect(result.status).toBe("FAILED");
    expect(result.notes.failure).toBe(failure);
    expect(result.content).toContain(message);
  });

  it("returns FAILED for an unknown tool", async () => {
    const bridge = bridgeFor({ server: fakeStdioServer("success") });
    const result = await bridge.callAiderTool("no_such_tool", {});
    expect(result.status).toBe("FAILED");
    expect(result.content).toContain("no_such_tool not found");
  });

  it("times out a call that neither replies nor reports progress, and stays usable", async () => {
    const bridge = bridgeFor({ server: fakeStdioServer("slow"), timeoutMs: 300 });
    const started = Date.now();
    const result = await bridge.callAiderTool("aider_ai_code", prompt);
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(result.status).toBe("FAILED");
    expect(result.notes.failure).toBe("timeout");
    expect(result.content).toContain("timed out after 300 ms");
    expect((await bridge.callAiderTool("list_models", {})).status).toBe("COMPLETE");
  });

  it("keeps waiting while progress arrives and reports it to onProgress", async () => {
    const seen: AiderProgress[] = [];
    const bridge = bridgeFor({
      server: fakeStdioServer("progress"),
      timeoutMs: 500,
      onProgress: (progress) => seen.push(progress),
    });
    // The run takes about 1.2 s, longer than timeoutMs, with progress every 150 ms.
    const result = await bridge.callAiderTool("aider_ai_code", prompt);
    expect(result.status).toBe("COMPLETE");
    expect(seen).toHaveLength(8);
    expect(seen[7]).toEqual({ toolName: "aider_ai_code", progress: 8, total: 8, message: "aider line 8" });
  });

  it("returns FAILED when the caller cancels", async () => {
    const bridge = bridgeFor({ server: fakeStdioServer("slow") });
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 200);
    const result = await bridge.callAiderTool("aider_ai_code", prompt, { signal: controller.signal });
    expect(result).toMatchObject({ status: "FAILED", notes: { failure: "cancelled" } });
  });

  it("returns FAILED with the server's stderr when the server dies mid-call, then reconnects", async () => {
    const bridge = bridgeFor({ server: fakeStdioServer("crash") });
    const result = await bridge.callAiderTool("aider_ai_code", prompt);
    expect(result.status).toBe("FAILED");
    expect(result.notes.failure).toBe("transport");
    expect(result.content).toContain("closed during the call");
    expect(result.content).toContain("fake server: crashing on purpose");
    expect((await bridge.callAiderTool("list_models", {})).status).toBe("COMPLETE");
  });

  it("reuses one server process across calls", async () => {
    const bridge = bridgeFor({ server: fakeStdioServer("success") });
    const first = await serverPid(bridge);
    expect(await serverPid(bridge)).toBe(first);
  });

  it("reconnects once when the server went away between calls", async () => {
    const bridge = bridgeFor({ server: fakeStdioServer("success") });
    const first = await serverPid(bridge);
    process.kill(first, "SIGKILL");
    await waitFor(() => !bridge.connected, "the bridge to notice the server exited");
    const second = await serverPid(bridge);
    expect(second).not.toBe(first);
  });

  it("reconnects when the server was killed just before the next call", async () => {
    const bridge = bridgeFor({ server: fakeStdioServer("success") });
    for (let round = 0; round < 3; round++) {
      const pid = await serverPid(bridge);
      process.kill(pid, "SIGKILL");
      const result = await bridge.callAiderTool("whoami", {});
      expect(result.status).toBe("COMPLETE");
      expect(result.notes.pid).not.toBe(pid);
    }
  });

  it("reports a server that cannot be started", async () => {
    const bridge = bridgeFor({
      server: { transport: "stdio", command: "/nonexistent/drydock-missing", args: ["serve"] },
    });
    const result = await bridge.callAiderTool("aider_ai_code", prompt);
    expect(result.status).toBe("FAILED");
    expect(result.notes.failure).toBe("connect");
    expect(result.content).toContain('server "/nonexistent/drydock-missing serve" could not be started');
    expect(result.content).toContain("check server.command");
  });

  it("reports a command that exits without speaking MCP", async () => {
    const bridge = bridgeFor({
      server: {
        transport: "stdio",
        command: process.execPath,
        args: ["-e", "process.stderr.write('no repo here\\n'); process.exit(2)"],
        stderr: "ignore",
      },
    });
    const result = await bridge.callAiderTool("list_models", {});
    expect(result.notes.failure).toBe("connect");
    expect(result.content).toContain("before the MCP handshake finished");
    expect(result.content).toContain("no repo here");
  });

  it("returns FAILED (closed) for a call still running when the bridge is closed", async () => {
    const bridge = bridgeFor({ server: fakeStdioServer("slow") });
    const pending = bridge.callAiderTool("aider_ai_code", prompt);
    await waitFor(() => bridge.connected, "the connection to open");
    await bridge.close();
    expect(await pending).toMatchObject({ status: "FAILED", notes: { failure: "closed" } });
  });

  it("keeps going when the onProgress callback throws", async () => {
    const bridge = bridgeFor({
      server: fakeStdioServer("progress"),
      onProgress: () => {
        throw new Error("callback bug");
      },
    });
    expect((await bridge.callAiderTool("aider_ai_code", prompt)).status).toBe("COMPLETE");
  });

  it("stops the server on close and refuses later calls", async () => {
    const bridge = bridgeFor({ server: fakeStdioServer("success") });
    const pid = await serverPid(bridge);
    await bridge.close();
    await waitFor(() => !processAlive(pid), "the server process to exit");
    const result = await bridge.callAiderTool("list_models", {});
    expect(result).toMatchObject({ status: "FAILED", notes: { failure: "closed" } });
    await bridge.close();
  });

  it("stops the server when disposed by `await using`", async () => {
    let pid = 0;
    {
      await using bridge = new AiderBridge({ server: fakeStdioServer("success") });
      pid = await serverPid(bridge);
      expect(processAlive(pid)).toBe(true);
    }
    await waitFor(() => !processAlive(pid), "the server process to exit");
  });
});

describe("AiderBridge configuration", () => {
  it.each([
    [{}, "server: missing"],
    [{ server: { transport: "ftp" } }, 'server.transport: expected "stdio" or "http"'],
    [{ server: { transport: "stdio" } }, "server.command: missing"],
    [{ server: { transport: "http", url: "::nope" } }, "server.url"],
    [
      { server: { transport: "stdio", command: "x" }, timeoutMs: -1 },
      "timeoutMs: expected a positive number",
    ],
    [undefined, "options: expected an object"],
  ])("returns FAILED instead of throwing for %j", async (options, message) => {
    const bridge = new AiderBridge(options as never);
    const result = await bridge.callAiderTool("aider_ai_code", prompt);
    expect(result.status).toBe("FAILED");
    expect(result.notes.failure).toBe("config");
    expect(result.content).toContain("invalid AiderBridge configuration");
    expect(result.content).toContain(message);
    await bridge.close();
  });

  it("returns FAILED for bad call arguments without starting the server", async () => {
    const bridge = bridgeFor({ server: { transport: "stdio", command: "/nonexistent/never-started" } });
    expect((await bridge.callAiderTool("", {})).notes.failure).toBe("config");
    expect((await bridge.callAiderTool("list_models", [] as never)).content).toContain(
      "params: expected an object",
    );
    expect((await bridge.callAiderTool("list_models", {}, { timeoutMs: 0 })).content).toContain("timeoutMs");
    expect(bridge.connected).toBe(false);
  });
});
