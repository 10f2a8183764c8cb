import { execFileSync } from "node:child_process";
import { mkdirSync, statSync } from "node:fs";
import { dirname, join } from "node:path";
import { describe, expect, it } from "vitest";
import { LlmGateway } from "../../../src/gateway/gateway.js";
import { FakeUpstream } from "./fake-upstream.js";
import { REAL_KEYS, startGateway, tempDir } from "./gateway-fixture.js";
import { send } from "./http-client.js";

const DUMMY = "drydock-dummy-key";

describe("LlmGateway routing and keys", () => {
  it("puts the host's OpenAI key on the call and never passes the box's dummy key", async () => {
    using dir = tempDir();
    await using upstream = await FakeUpstream.start();
    await using gateway = await startGateway(dir.path, upstream);
    const reply = await send(
      { socketPath: gateway.address },
      {
        path: "/openai/v1/chat/completions",
        body: { model: "gpt-4o", messages: [{ role: "user", content: "hi" }] },
        headers: { authorization: `Bearer ${DUMMY}`, "x-api-key": DUMMY, "api-key": DUMMY, cookie: "a=b" },
      },
    );
    expect(reply.status).toBe(200);
    expect(JSON.parse(reply.body).choices[0].message.content).toBe("hello from openai");
    expect(reply.headers["x-drydock-source"]).toBe("upstream");
    const seen = upstream.requests[0];
    expect(seen?.url).toBe("/v1/chat/completions");
    expect(seen?.headers.authorization).toBe(`Bearer ${REAL_KEYS.openai?.value}`);
    expect(seen?.headers["x-api-key"]).toBeUndefined();
    expect(seen?.headers["api-key"]).toBeUndefined();
    expect(seen?.headers.cookie).toBeUndefined();
    expect(seen?.headers["accept-encoding"]).toBe("identity");
    expect(JSON.stringify(seen)).not.toContain(DUMMY);
  });

  it("sends Anthropic's key as x-api-key and keeps the client's anthropic-version", async () => {
    using dir = tempDir();
    await using upstream = await FakeUpstream.start();
    await using gateway = await startGateway(dir.path, upstream);
    await send(
      { socketPath: gateway.address },
      {
        path: "/anthropic/v1/messages",
        body: { model: "claude-sonnet-4-5", max_tokens: 10, messages: [{ role: "user", content: "hi" }] },
        headers: { "x-api-key": DUMMY, authorization: `Bearer ${DUMMY}`, "anthropic-version": "2023-06-01" },
      },
    );
    const seen = upstream.requests[0];
    expect(seen?.url).toBe("/v1/messages");
    expect(seen?.headers["x-api-key"]).toBe(REAL_KEYS.anthropic?.value);
    expect(seen?.headers.authorization).toBeUndefined();
    expect(seen?.headers["anthropic-version"]).toBe("2023-06-01");
  });

  it("sends Gemini's key as x-goog-api-key and drops a key in the query", async () => {
    using dir = tempDir();
    await using upstream = await FakeUpstream.start();
    await using gateway = await startGateway(dir.path, upstream);
    await send(
      { socketPath: gateway.address },
      {
        path: `/gemini/v1beta/models/gemini-2.5-pro:streamGenerateContent?key=${DUMMY}&alt=sse`,
        body: { contents: [{ role: "user", parts: [{ text: "hi" }] }] },
        headers: { "x-goog-api-key": DUMMY },
      },
    );
    const seen = upstream.requests[0];
    expect(seen?.url).toBe("/v1beta/models/gemini-2.5-pro:streamGenerateContent?alt=sse");
    expect(seen?.headers["x-goog-api-key"]).toBe(REAL_KEYS.gemini?.value);
  });

  it("refuses an upstream that is not on the allowlist without contacting it", async () => {
    using dir = tempDir();
    await using upstream = await FakeUpstream.start();
    await using gateway = await startGateway(dir.path, upstream, { allowedHosts: ["api.openai.com"] });
    const reply = await send(
      { socketPath: gateway.address },
      {
        path: "/openai/v1/chat/completions",
        body: { model: "gpt-4o", messages: [{ role: "user", content: "hi" }] },
      },
    );
    expect(reply.status).toBe(400);
    expect(JSON.parse(reply.body).error).toMatchObject({
      code: "upstream_not_allowed",
      message: expect.stringContaining(`upstream ${upstream.host} is not on the allowlist`),
    });
    expect(upstream.requests).toHaveLength(0);
    expect(gateway.usage()).toMatchObject({ requests: 0, refused: 1 });
  });

  it("answers refusals in the provider's own error shape", async () => {
    using dir = tempDir();
    await using gateway = await startGateway(dir.path, undefined, { allowedHosts: [] });
    const anthropic = await send(
      { socketPath: gateway.address },
      { path: "/anthropic/v1/messages", body: { messages: [] } },
    );
    expect(JSON.parse(anthropic.body)).toMatchObject({
      type: "error",
      error: { type: "invalid_request_error" },
    });
    const gemini = await send(
      { socketPath: gateway.address },
      { path: "/gemini/v1beta/models/gemini-2.5-pro:generateContent", body: {} },
    );
    expect(JSON.parse(gemini.body).error).toMatchObject({ code: 400, status: "FAILED_PRECONDITION" });
  });

  it("sends keys only over https except to loopback", async () => {
    using dir = tempDir();
    await using gateway = await startGateway(dir.path, undefined, {
      upstreams: { openai: "http://api.openai.com" },
    });
    const reply = await send({ socketPath: gateway.address }, { path: "/openai/v1/models" });
    expect(reply.status).toBe(400);
    expect(reply.body).toContain("is not https");
  });

  it("refuses a provider the host has no key for, naming the variable and the offline model", async () => {
    using dir = tempDir();
    await using upstream = await FakeUpstream.start();
    await using gateway = await startGateway(dir.path, upstream, { keys: {} });
    const reply = await send(
      { socketPath: gateway.address },
      { path: "/anthropic/v1/messages", body: { messages: [] } },
    );
    expect(reply.status).toBe(400);
    expect(reply.body).toContain("ANTHROPIC_API_KEY");
    expect(reply.body).toContain("openai/drydock-offline");
    expect(upstream.requests).toHaveLength(0);
  });

  it("answers an unknown route with 404 and the routes it knows", async () => {
    using dir = tempDir();
    await using gateway = await startGateway(dir.path, undefined);
    const reply = await send(
      { socketPath: gateway.address },
      { path: "/example.com/v1/chat/completions", body: {} },
    );
    expect(reply.status).toBe(404);
    expect(reply.body).toContain("use /openai, /anthropic, /gemini or /offline");
  });

  it("serves the offline model under /offline with no key at all", async () => {
    using dir = tempDir();
    await using gateway = await startGateway(dir.path, undefined, { keys: {} });
    const reply = await send(
      { socketPath: gateway.address },
      {
        path: "/offline/v1/chat/completions",
        body: { model: "drydock-offline", messages: [{ role: "user", content: "Make greet() say hello" }] },
      },
    );
    expect(reply.status).toBe(200);
    expect(reply.headers["x-drydock-source"]).toBe("offline");
    expect(JSON.parse(reply.body).choices[0].message.content).toContain("<<<<<<< SEARCH");
  });

  it("in offline mode answers OpenAI calls with the offline model and refuses the others", async () => {
    using dir = tempDir();
    await using upstream = await FakeUpstream.start();
    await using gateway = await startGateway(dir.path, upstream, { mode: { kind: "offline" } });
    const openai = await send(
      { socketPath: gateway.address },
      {
        path: "/openai/v1/chat/completions",
        body: { model: "gpt-4o", messages: [{ role: "user", content: "greet" }] },
      },
    );
    expect(openai.headers["x-drydock-source"]).toBe("offline");
    const anthropic = await send(
      { socketPath: gateway.address },
      { path: "/anthropic/v1/messages", body: {} },
    );
    expect(anthropic.status).toBe(400);
    expect(anthropic.body).toContain("--llm offline");
    expect(upstream.requests).toHaveLength(0);
  });

  it("makes the socket connectable by drydock's own user only: no box and no other user", async () => {
    using dir = tempDir();
    await using gateway = await startGateway(dir.path, undefined);
    const socket = statSync(gateway.address);
    const parent = statSync(dirname(gateway.address));
    expect(socket.isSocket()).toBe(true);
    expect(socket.mode & 0o777).toBe(0o600);
    // The directory prepareSocketPath made: private, and still this process's user's.
    expect(parent.mode & 0o777).toBe(0o700);
    expect(parent.uid).toBe(process.getuid?.());
  });

  it("replaces a stale socket left by a crash, and removes its socket on close", async () => {
    using dir = tempDir();
    const path = join(dir.path, "run", "llm.sock");
    mkdirSync(dirname(path));
    // A socket file nobody listens on, as a killed process leaves it (Node would unlink its own).
    execFileSync("python3", [
      "-c",
      "import socket,sys; socket.socket(socket.AF_UNIX).bind(sys.argv[1])",
      path,
    ]);
    expect(statSync(path).isSocket()).toBe(true);
    const gateway = await startGateway(dir.path, undefined);
    expect(gateway.address).toBe(path);
    expect((await send({ socketPath: path }, { path: "/nowhere" })).status).toBe(404);
    await gateway.close();
    expect(() => statSync(path)).toThrow();
  });

  it("refuses a socket path another gateway is listening on", async () => {
    using dir = tempDir();
    await using first = await startGateway(dir.path, undefined);
    expect(statSync(first.address).isSocket()).toBe(true);
    await expect(startGateway(dir.path, undefined)).rejects.toThrow(/another process is listening/);
  });

  it("needs exactly one of socketPath and tcp", async () => {
    await expect(LlmGateway.start({ keys: {} })).rejects.toThrow(/exactly one of socketPath or tcp/);
  });
});
