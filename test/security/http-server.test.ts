/**
 * The HTTP server under hostile input from a client that holds the token: malformed JSON and
 * JSON-RPC, unknown methods and tools, huge arguments, deeply nested JSON, odd HTTP. Each gets a
 * clear error and the server keeps serving. (Missing or wrong tokens, foreign Host or Origin,
 * oversized bodies and client scoping are in test/integration/mcp-server.test.ts; the token
 * comparison in token-compare.test.ts.)
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { serveHttp, type HttpHandle } from "../../src/server/http.js";
import { inMemoryDrydock, ok, type InMemoryDrydock } from "../helpers/mcp-client.js";
import { tempRepo, type TempRepo } from "../helpers/repos.js";

const TOKEN = `http-${Math.random().toString(36).slice(2)}`;

interface Answer {
  status: number;
  /** The JSON-RPC message in the answer (plain JSON or the data of a server-sent event). */
  message:
    { error?: { code: number; message: string }; result?: Record<string, unknown>; id?: unknown } | undefined;
}

describe("the HTTP server under hostile input", () => {
  let repo: TempRepo;
  let drydock: InMemoryDrydock;
  let http: HttpHandle;
  let mcpSession = "";

  const post = async (
    body: string | Buffer,
    headers: Record<string, string> = {},
    method = "POST",
  ): Promise<Answer> => {
    const response = await fetch(http.url, {
      method,
      headers: {
        authorization: `Bearer ${TOKEN}`,
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
        ...(mcpSession ? { "mcp-session-id": mcpSession, "mcp-protocol-version": "2025-06-18" } : {}),
        ...headers,
      },
      ...(method === "GET" || method === "DELETE" ? {} : { body }),
    });
    const text = await response.text();
    const data = /^data: (.*)$/m.exec(text)?.[1] ?? text;
    let message: Answer["message"];
    try {
      message = data ? (JSON.parse(data) as Answer["message"]) : undefined;
    } catch {
      message = undefined;
    }
    return { status: response.status, message };
  };
  const rpc = (method: string, params?: unknown, id: unknown = 7) =>
    post(JSON.stringify({ jsonrpc: "2.0", id, method, ...(params === undefined ? {} : { params }) }));
  const toolText = (answer: Answer): string =>
    ((answer.message?.result?.content as Array<{ text: string }> | undefined)?.[0]?.text ?? "") as string;

  beforeAll(async () => {
    repo = tempRepo({ "data.json": '{"a": 1}\n' });
    drydock = await inMemoryDrydock({ repo: repo.path });
    http = await serveHttp(drydock.server, { host: "127.0.0.1", port: 0, token: TOKEN });
  });

  afterAll(async () => {
    await http?.close();
    await drydock?.[Symbol.asyncDispose]();
    repo?.[Symbol.dispose]();
  });

  it("refuses malformed bodies before any session exists, with JSON errors", async () => {
    const bodies: Array<string | Buffer> = [
      "{",
      "",
      "null",
      "123",
      '"text"',
      "[]",
      '{"jsonrpc":"2.0"}',
      '{"jsonrpc":"1.0","id":1,"method":"initialize"}',
      '[{"jsonrpc":"2.0","id":1,"method":"tools/list"}]',
      Buffer.from([0xff, 0xfe, 0x7b, 0x00, 0x80]),
      `{"a":${"[".repeat(100_000)}${"]".repeat(100_000)}}`,
    ];
    for (const body of bodies) {
      const answer = await post(body);
      expect(answer.status, String(body).slice(0, 40)).toBeGreaterThanOrEqual(400);
      expect(answer.status, String(body).slice(0, 40)).toBeLessThan(500);
      expect(answer.message?.error?.message, String(body).slice(0, 40)).toBeTruthy();
    }
  });

  it("answers odd HTTP: other paths, methods, unknown MCP sessions", async () => {
    expect(
      (await fetch(http.url.replace("/mcp", "/admin"), { headers: { authorization: `Bearer ${TOKEN}` } }))
        .status,
    ).toBe(404);
    for (const method of ["GET", "DELETE", "PUT", "PATCH"]) {
      const answer = await post("{}", {}, method);
      expect(answer.status, method).toBeGreaterThanOrEqual(400);
      expect(answer.status, method).toBeLessThan(500);
    }
    const unknown = await post(JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }), {
      "mcp-session-id": "00000000-0000-0000-0000-000000000000",
    });
    expect(unknown.status).toBe(404);
  });

  it("inside a session: unknown methods and tools, malformed calls, huge and deeply nested arguments get clear errors", async () => {
    const init = await fetch(http.url, {
      method: "POST",
      headers: {
        authorization: `Bearer ${TOKEN}`,
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
      },
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: 1,
        method: "initialize",
        params: {
          protocolVersion: "2025-06-18",
          capabilities: {},
          clientInfo: { name: "raw", version: "1" },
        },
      }),
    });
    expect(init.status).toBe(200);
    mcpSession = init.headers.get("mcp-session-id") ?? "";
    await init.text();
    expect(mcpSession).not.toBe("");
    expect((await post(JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" }))).status).toBe(
      202,
    );

    expect((await rpc("no/such/method")).message?.error?.code).toBe(-32601);
    expect(toolText(await rpc("tools/call", { name: "no_such_tool", arguments: {} }))).toMatch(
      /^no tool named "no_such_tool" on this server; tools\/list names the \d+ it serves/,
    );
    expect(toolText(await rpc("tools/call", { name: "bash" }))).toMatch(/command/);
    expect(toolText(await rpc("tools/call", { name: "bash", arguments: { command: ["ls"] } }))).toMatch(
      /command/,
    );
    expect(
      toolText(await rpc("tools/call", { name: "bash", arguments: { command: "true", timeout_s: -1 } })),
    ).toMatch(/timeout_s/);
    for (const params of [null, 5, "x", []]) {
      const answer = await rpc("tools/call", params);
      expect(answer.status, JSON.stringify(params)).toBeLessThan(500);
      expect(answer.message?.error ?? answer.message?.result?.isError, JSON.stringify(params)).toBeTruthy();
    }
    expect((await rpc("tools/list", undefined, { not: "an id" })).status).toBeGreaterThanOrEqual(400);
    expect(
      (await post(JSON.stringify({ jsonrpc: "2.0", method: "notifications/no_such_thing" }))).status,
    ).toBe(202);
    // Nested deeper than anything the tools accept: refused by field, not by a stack overflow.
    const deep = `{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"json_editor","arguments":{"operation":"set","file_path":"data.json","json_path":"$.b","value":${"[".repeat(150_000)}${"]".repeat(150_000)}}}}`;
    expect(toolText(await post(deep))).toMatch(/^value: nests deeper than \d+ levels/);
    const deepTask = `{"jsonrpc":"2.0","id":10,"method":"tools/call","params":{"name":"create_new_task","arguments":{"title":"t","body":${'{"a":'.repeat(100_000)}1${"}".repeat(100_000)}}}}`;
    expect(toolText(await post(deepTask))).toMatch(/body/);
    // Just under the body cap: a command of 3.9 MB is run, and its answer is exact.
    const huge = await rpc("tools/call", {
      name: "bash",
      arguments: { command: `echo ${"x".repeat(3_900_000)} | wc -c` },
    });
    expect(huge.message?.result?.structuredContent).toMatchObject({ stdout: "3900001\n" });
    expect(toolText(huge)).toBe("3900001\n[exit code 0]");
    // A file_editor create of 3.9 MB of content, and a path of 100 000 characters.
    const big = await rpc("tools/call", {
      name: "file_editor",
      arguments: { operation: "create", path: "big.txt", content: "y".repeat(3_900_000) },
    });
    expect(big.message?.result?.isError).toBeFalsy();
    expect(
      toolText(
        await rpc("tools/call", {
          name: "file_editor",
          arguments: { operation: "view", path: "p/".repeat(50_000) },
        }),
      ),
    ).toMatch(/path/);
  });

  it("huge arguments again and again: a task stack stops growing at its cap with a clear error, and stays quick", async () => {
    const client = new Client({ name: "hoarder", version: "1" });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(http.url), {
        requestInit: { headers: { Authorization: `Bearer ${TOKEN}` } },
      }),
    );
    try {
      const body = "n".repeat(1_000_000);
      const create = () => client.callTool({ name: "create_new_task", arguments: { title: "notes", body } });
      let accepted = 0;
      let refusal = "";
      for (let i = 0; i < 40 && !refusal; i++) {
        const started = Date.now();
        const reply = (await create()) as { isError?: boolean; content: Array<{ text: string }> };
        expect(Date.now() - started, `call ${i}`).toBeLessThan(5_000);
        if (reply.isError) refusal = reply.content[0]!.text;
        else accepted++;
      }
      expect(refusal).toMatch(/task stack holds .* characters .* the limit is [\d,]+/);
      expect(accepted).toBeGreaterThan(0);
      expect(accepted).toBeLessThan(20);
      // Completing and removing does not make room: the archive keeps completed tasks' text.
      ok(await client.callTool({ name: "complete_current_task", arguments: {} }));
      expect(((await create()) as { isError?: boolean }).isError).toBe(true);
      // A small task still fits, and the stack answers.
      ok(await client.callTool({ name: "update_current_task", arguments: { body: "short now" } }));
      expect(ok(await client.callTool({ name: "get_stack_overview", arguments: {} })).counts).toMatchObject({
        total: accepted,
      });
    } finally {
      await client.close();
    }
  });

  it("keeps serving after all of it: a new client lists the tools and runs a command", async () => {
    const client = new Client({ name: "after", version: "1" });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(http.url), {
        requestInit: { headers: { Authorization: `Bearer ${TOKEN}` } },
      }),
    );
    try {
      expect((await client.listTools()).tools.length).toBeGreaterThan(20);
      expect(ok(await client.callTool({ name: "bash", arguments: { command: "echo up" } })).stdout).toBe(
        "up\n",
      );
    } finally {
      await client.close();
    }
  });
});
