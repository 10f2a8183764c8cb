/**
 * Clients of `drydock serve --http` that open a connection per call (the MCP Inspector CLI) or
 * simply go away without ending their MCP session: their boxes are removed a short grace after
 * their last connection closed, not after the 30-minute idle limit; with --keep-sessions a new
 * connection takes a session up again with its secret. Run with the real Inspector CLI.
 */
import { execFile } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { afterEach, describe, expect, it } from "vitest";
import { spawnHttpServer, stopServer, type SpawnedHttpServer } from "../helpers/http-server.js";
import { tempRepo } from "../helpers/repos.js";

const run = promisify(execFile);
const cli = join(process.cwd(), "dist", "cli", "main.js");
const inspectorCli = join(process.cwd(), "node_modules/@modelcontextprotocol/inspector/cli/build/cli.js");
const TOKEN = "disconnect-test-token-0123456789";

let server: SpawnedHttpServer | undefined;
let state: string | undefined;
/** Kept sessions outlive their server by design: the test removes its own. */
const kept: string[] = [];

afterEach(async () => {
  await stopServer(server?.child);
  server = undefined;
  if (state) {
    for (const id of kept.splice(0)) {
      await run(process.execPath, [cli, "sessions", "rm", id, "--yes"], {
        env: { ...process.env, DRYDOCK_STATE_DIR: state },
      });
    }
    rmSync(state, { recursive: true, force: true });
  }
  state = undefined;
});

async function start(repo: string, args: string[]): Promise<SpawnedHttpServer> {
  state = mkdtempSync(join(tmpdir(), "drydock-state-"));
  server = await spawnHttpServer({
    repo,
    env: { ...process.env, DRYDOCK_STATE_DIR: state, DRYDOCK_TOKEN: TOKEN },
    args: ["--pool", "0", ...args],
  });
  return server;
}

/** One tool call by the Inspector CLI over HTTP: its own process, its own connection. */
async function inspectorCall(url: string, tool: string, args: Record<string, string> = {}) {
  const toolArgs = Object.entries(args).flatMap(([k, v]) => ["--tool-arg", `${k}=${v}`]);
  const { stdout } = await run(
    process.execPath,
    [
      inspectorCli,
      "--cli",
      url,
      "--transport",
      "http",
      "--header",
      `Authorization: Bearer ${TOKEN}`,
      "--method",
      "tools/call",
      "--tool-name",
      tool,
      ...toolArgs,
    ],
    { timeout: 120_000 },
  );
  return JSON.parse(stdout) as {
    isError?: boolean;
    content: Array<{ text: string }>;
    structuredContent?: Record<string, unknown>;
  };
}

async function boxRunning(box: string): Promise<boolean> {
  const { stdout } = await run("docker", ["ps", "-q", "--filter", `id=${box}`]);
  return stdout.trim() !== "";
}

async function waitUntil(what: string, check: () => Promise<boolean>, timeoutMs: number): Promise<number> {
  const started = Date.now();
  while (!(await check())) {
    if (Date.now() - started > timeoutMs) throw new Error(`${what} did not happen within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 250));
  }
  return Date.now() - started;
}

describe("serve --http and clients that go away", () => {
  it("removes the box of an Inspector CLI call a short grace after its connection closed", async () => {
    using repo = tempRepo();
    const { url } = await start(repo.path, ["--tools", "core", "--disconnect-grace", "2"]);
    const created = await inspectorCall(url, "session_create");
    const box = created.structuredContent!.box as string;
    const took = await waitUntil("the box's removal", async () => !(await boxRunning(box)), 30_000);
    expect(took).toBeLessThan(30_000);
  });

  it("keeps the sessions of a client whose connection stays open past the grace", async () => {
    using repo = tempRepo();
    const { url } = await start(repo.path, ["--tools", "core", "--disconnect-grace", "1"]);
    const client = new Client({ name: "stays", version: "1" });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(url), {
        requestInit: { headers: { authorization: `Bearer ${TOKEN}` } },
      }),
    );
    try {
      const first = await client.callTool({ name: "bash", arguments: { command: "echo kept > /tmp/mark" } });
      expect(first.isError).toBeFalsy();
      await new Promise((r) => setTimeout(r, 4_000));
      const again = await client.callTool({ name: "bash", arguments: { command: "cat /tmp/mark" } });
      expect((again.structuredContent as { stdout: string }).stdout).toBe("kept\n");
    } finally {
      await client.close();
    }
  });

  it("hands a kept session to a new connection with its secret, and to nobody without it", async () => {
    using repo = tempRepo();
    const { url } = await start(repo.path, [
      "--keep-sessions",
      "--tools",
      "core,session_resume",
      "--disconnect-grace",
      "1",
    ]);
    const created = (await inspectorCall(url, "session_create")).structuredContent!;
    const id = created.session_id as string;
    kept.push(id);
    const secret = created.session_secret as string;
    // A wrong secret is answered as an unknown session, saying whose sessions are whose.
    const wrong = await inspectorCall(url, "session_resume", {
      session_id: id,
      session_secret: "x".repeat(43),
    });
    expect(wrong.isError).toBe(true);
    expect(wrong.content[0]!.text).toMatch(/belongs to the client connection that created it/);
    // The creator's connection is gone: once its grace ran out the session is free for its secret.
    const resumed = await waitUntil(
      "the kept session's release",
      async () =>
        (await inspectorCall(url, "session_resume", { session_id: id, session_secret: secret })).isError !==
        true,
      30_000,
    );
    expect(resumed).toBeLessThan(30_000);
    expect(await boxRunning(created.box as string)).toBe(true);
  });
});
