import { afterEach, describe, expect, it } from "vitest";
import { AiderBridge } from "../../../src/index.js";
import { startHttpFakeServer, type HttpFakeServer } from "../../helpers/fake-mcp-server.mjs";
import { waitFor } from "./fixtures.js";

const token = "test-token-123";
const prompt = { ai_coding_prompt: "rename x to y", relative_editable_files: ["src/a.ts"] };
const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function fake(options: Parameters<typeof startHttpFakeServer>[0] = {}): Promise<HttpFakeServer> {
  const server = await startHttpFakeServer({ token, ...options });
  cleanups.push(() => server.close());
  return server;
}

function bridgeFor(options: ConstructorParameters<typeof AiderBridge>[0]): AiderBridge {
  const bridge = new AiderBridge(options);
  cleanups.push(() => bridge.close());
  return bridge;
}

describe("AiderBridge over Streamable HTTP", () => {
  it("returns COMPLETE with the diff, sending the bearer token", async () => {
    const server = await fake();
    const bridge = bridgeFor({ server: { transport: "http", url: server.url, token } });
    const result = await bridge.callAiderTool("aider_ai_code", prompt);
    expect(result.status).toBe("COMPLETE");
    expect(result.content).toContain("diff --git a/src/a.ts b/src/a.ts");
    expect(result.notes).toMatchObject({ success: true, model: "fake/alpha-coder" });
    expect((await bridge.callAiderTool("list_models", { substring: "gamma" })).notes.models).toEqual([
      "other/gamma",
    ]);
  });

  it("returns FAILED with the server's reason over HTTP as over stdio", async () => {
    const server = await fake({ mode: "error_key" });
    const bridge = bridgeFor({ server: { transport: "http", url: server.url, token } });
    const result = await bridge.callAiderTool("aider_ai_code", prompt);
    expect(result).toMatchObject({ status: "FAILED", notes: { failure: "error_key" } });
  });

  it("times out over HTTP", async () => {
    const server = await fake({ mode: "slow" });
    const bridge = bridgeFor({ server: { transport: "http", url: server.url, token }, timeoutMs: 300 });
    const result = await bridge.callAiderTool("aider_ai_code", prompt);
    expect(result).toMatchObject({ status: "FAILED", notes: { failure: "timeout" } });
  });

  it("reports a wrong token and names the option", async () => {
    const server = await fake();
    const bridge = bridgeFor({ server: { transport: "http", url: server.url, token: "wrong" } });
    const result = await bridge.callAiderTool("list_models", {});
    expect(result.status).toBe("FAILED");
    expect(result.notes.failure).toBe("connect");
    expect(result.content).toContain("HTTP 401");
    expect(result.content).toContain("check server.token");
  });

  it("reports a URL where nothing listens", async () => {
    const server = await fake();
    await server.close();
    const bridge = bridgeFor({ server: { transport: "http", url: server.url, token } });
    const result = await bridge.callAiderTool("list_models", {});
    expect(result.notes.failure).toBe("connect");
    expect(result.content).toContain(`nothing is listening at ${server.url}`);
  });

  it("reconnects once when the server restarted and forgot the session", async () => {
    const first = await fake();
    const bridge = bridgeFor({ server: { transport: "http", url: first.url, token } });
    expect((await bridge.callAiderTool("list_models", {})).status).toBe("COMPLETE");
    await first.close();
    // A real restart takes a moment; in one process the client needs it to see its sockets close.
    await new Promise((resolve) => setTimeout(resolve, 200));
    const second = await fake({ port: first.port });
    const result = await bridge.callAiderTool("list_models", {});
    expect(result.status).toBe("COMPLETE");
    expect(second.sessionCount()).toBe(1);
  });

  it("reuses one session and ends it on close", async () => {
    const server = await fake();
    const bridge = bridgeFor({ server: { transport: "http", url: server.url, token } });
    await bridge.callAiderTool("list_models", {});
    await bridge.callAiderTool("whoami", {});
    expect(server.sessionCount()).toBe(1);
    await bridge.close();
    await waitFor(() => server.sessionCount() === 0, "the server to drop the session");
    expect((await bridge.callAiderTool("list_models", {})).notes.failure).toBe("closed");
  });
});
