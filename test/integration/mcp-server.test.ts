import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { Engine } from "../../src/engine/engine.js";
import { LABEL_SESSION } from "../../src/engine/labels.js";
import { spawnHttpServer, stopServer } from "../helpers/http-server.js";
import { git, tempRepo, type TempRepo } from "../helpers/repos.js";

const cli = join(process.cwd(), "dist", "cli", "main.js");

function parse(result: unknown): Record<string, unknown> {
  const r = result as {
    content: Array<{ text: string }>;
    structuredContent?: Record<string, unknown>;
    isError?: boolean;
  };
  expect(r.isError, r.content[0]?.text).toBeFalsy();
  expect(typeof r.content[0]?.text).toBe("string");
  expect(r.structuredContent).toBeDefined();
  return r.structuredContent!;
}

function errorText(result: unknown): string {
  const r = result as { content: Array<{ text: string }>; isError?: boolean };
  expect(r.isError).toBe(true);
  return r.content[0]!.text;
}

async function boxesOf(sessionId: string): Promise<number> {
  const engine = await Engine.connect();
  return (await engine.listBoxes(LABEL_SESSION, sessionId)).length;
}

describe("drydock serve over stdio", () => {
  let repo: TempRepo;
  let state: string;
  let client: Client;

  beforeAll(async () => {
    repo = tempRepo({ "src/app.py": "def main():\n    return 1\n" });
    state = mkdtempSync(join(tmpdir(), "drydock-state-"));
    client = new Client({ name: "test", version: "1" });
    await client.connect(
      new StdioClientTransport({
        command: process.execPath,
        args: [
          cli,
          "serve",
          "--repo",
          repo.path,
          "--image",
          inject("sandboxImage"),
          "--tools",
          "all",
          "--output-schemas",
        ],
        env: { ...process.env, DRYDOCK_STATE_DIR: state } as Record<string, string>,
        stderr: "ignore",
      }),
    );
  });

  afterAll(async () => {
    await client?.close();
    repo?.[Symbol.dispose]();
    rmSync(state, { recursive: true, force: true });
  });

  it("lists every tool with input and output schemas (--output-schemas)", async () => {
    const { tools } = await client.listTools();
    const names = tools.map((t) => t.name);
    for (const name of [
      "session_create",
      "session_list",
      "session_destroy",
      "session_diff",
      "session_apply",
      "bash",
      "task_done",
      "create_new_task",
      "get_big_picture",
    ]) {
      expect(names).toContain(name);
    }
    for (const t of tools) {
      expect(t.description!.length).toBeGreaterThan(40);
      expect(t.outputSchema).toBeDefined();
    }
  });

  it("runs bash in a default session, diffs and applies to a branch without touching the working tree", async () => {
    const r = parse(
      await client.callTool({ name: "bash", arguments: { command: "echo 'x = 2' >> src/app.py && id -u" } }),
    );
    expect(r.stdout).toBe("1000\n");
    expect(r.exit_code).toBe(0);
    const diff = parse(await client.callTool({ name: "session_diff", arguments: {} }));
    expect(diff.diff).toContain("+x = 2");
    const before = git(repo.path, "status", "--porcelain");
    const applied = parse(
      await client.callTool({ name: "session_apply", arguments: { branch: "drydock/test-apply" } }),
    );
    expect(applied.branch).toBe("drydock/test-apply");
    expect(git(repo.path, "show", "drydock/test-apply:src/app.py")).toContain("x = 2");
    expect(git(repo.path, "status", "--porcelain")).toBe(before);
    const done = parse(await client.callTool({ name: "task_done", arguments: { summary: "added x" } }));
    expect(done.stat).toContain("src/app.py");
  });

  it("creates, lists and destroys an explicit session", async () => {
    const created = parse(await client.callTool({ name: "session_create", arguments: { memory_mb: 512 } }));
    const id = created.session_id as string;
    expect((created.limits as { memoryMB: number }).memoryMB).toBe(512);
    const listed = parse(await client.callTool({ name: "session_list", arguments: {} }));
    expect((listed.sessions as Array<{ session_id: string }>).map((s) => s.session_id)).toContain(id);
    expect(await boxesOf(id)).toBe(1);
    parse(await client.callTool({ name: "session_destroy", arguments: { session_id: id } }));
    expect(await boxesOf(id)).toBe(0);
  });

  it("answers bad input with errors that name the field", async () => {
    expect(errorText(await client.callTool({ name: "bash", arguments: {} }))).toMatch(/command/);
    expect(errorText(await client.callTool({ name: "bash", arguments: { command: 5 } }))).toMatch(/command/);
    expect(
      errorText(await client.callTool({ name: "bash", arguments: { command: "true", session_id: "nope" } })),
    ).toMatch(/session nope not found.*session_create/);
    expect(
      errorText(await client.callTool({ name: "session_create", arguments: { repo: "/nonexistent" } })),
    ).toMatch(/repo/);
    expect(
      errorText(
        await client.callTool({ name: "create_new_task", arguments: { title: "x".repeat(257), body: "" } }),
      ),
    ).toMatch(/title/);
  });
});

describe("a stdio client that goes away", () => {
  it("leaves no box behind", async () => {
    using repo = tempRepo();
    const state = mkdtempSync(join(tmpdir(), "drydock-state-"));
    const client = new Client({ name: "leaving", version: "1" });
    await client.connect(
      new StdioClientTransport({
        command: process.execPath,
        args: [
          cli,
          "serve",
          "--repo",
          repo.path,
          "--image",
          inject("sandboxImage"),
          "--tools",
          "all",
          "--output-schemas",
        ],
        env: { ...process.env, DRYDOCK_STATE_DIR: state } as Record<string, string>,
        stderr: "ignore",
      }),
    );
    const created = parse(await client.callTool({ name: "session_create", arguments: {} }));
    const id = created.session_id as string;
    expect(await boxesOf(id)).toBe(1);
    await client.close();
    await expect.poll(() => boxesOf(id), { timeout: 20_000 }).toBe(0);
    rmSync(state, { recursive: true, force: true });
  });
});

describe("drydock serve over Streamable HTTP", () => {
  let repo: TempRepo;
  let state: string;
  let child: ReturnType<typeof spawn>;
  let url: string;
  const token = "test-token-" + Math.random().toString(36).slice(2);

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

  const connect = async (auth = token) => {
    const c = new Client({ name: "http-test", version: "1" });
    await c.connect(
      new StreamableHTTPClientTransport(new URL(url), {
        requestInit: { headers: { Authorization: `Bearer ${auth}` } },
      }),
    );
    return c;
  };

  const raw = (headers: Record<string, string>, body = "{}") =>
    fetch(url, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
        ...headers,
      },
      body,
    });

  it("refuses requests without the token, with a wrong token, a foreign Host or Origin, or an oversized body", async () => {
    expect((await raw({})).status).toBe(401);
    expect((await raw({ authorization: "Bearer wrong" })).status).toBe(401);
    expect((await raw({ authorization: `Bearer ${token}`, origin: "http://evil.example" })).status).toBe(403);
    const port = new URL(url).port;
    const evilHost = await new Promise<number>((resolve) => {
      import("node:http").then(({ request }) => {
        const req = request(
          {
            host: "127.0.0.1",
            port,
            path: "/mcp",
            method: "POST",
            headers: { host: "evil.example", authorization: `Bearer ${token}` },
          },
          (res) => resolve(res.statusCode ?? 0),
        );
        req.end("{}");
      });
    });
    expect(evilHost).toBe(403);
    expect((await raw({ authorization: `Bearer ${token}` }, "x".repeat(5 * 1024 * 1024))).status).toBe(413);
  });

  it("keeps each client's sessions to itself and removes them when the client leaves", async () => {
    const a = await connect();
    const b = await connect();
    const created = parse(await a.callTool({ name: "session_create", arguments: {} }));
    const id = created.session_id as string;
    expect(
      errorText(await b.callTool({ name: "bash", arguments: { command: "true", session_id: id } })),
    ).toMatch(/not found/);
    expect(errorText(await b.callTool({ name: "session_destroy", arguments: { session_id: id } }))).toMatch(
      /not found/,
    );
    expect(
      (parse(await b.callTool({ name: "session_list", arguments: {} })).sessions as unknown[]).length,
    ).toBe(0);
    expect(
      parse(await a.callTool({ name: "bash", arguments: { command: "echo mine", session_id: id } })).stdout,
    ).toBe("mine\n");
    await (a.transport as StreamableHTTPClientTransport).terminateSession();
    await a.close();
    await expect.poll(() => boxesOf(id), { timeout: 15_000 }).toBe(0);
    await b.close();
  });
});
