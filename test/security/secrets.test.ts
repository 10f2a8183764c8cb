/**
 * The box holds no secret, and whatever it prints that equals a host secret is redacted before it
 * leaves the host: in a tool's answer, in its progress notifications, in drydock's logs and in
 * the MCP logging messages. The engine's own records of the box (`docker inspect`) hold no key.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { LoggingMessageNotificationSchema } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Engine } from "../../src/engine/engine.js";
import { serverExtensions } from "../../src/server/extensions.js";
import { addLogSink, setLogLevel } from "../../src/util/log.js";
import { failure, inMemoryDrydock, ok, type InMemoryDrydock } from "../helpers/mcp-client.js";
import { tempRepo, type TempRepo } from "../helpers/repos.js";

const KEY = `sk-drydock-${Math.random().toString(36).slice(2)}${Date.now().toString(36)}`;
const HALF = Math.floor(KEY.length / 2);
/** A key holding characters JSON escapes: a reply's JSON text has it only in its escaped form. */
const ESCAPED_KEY = `sk-ant-"${Math.random().toString(36).slice(2)}\\${Date.now().toString(36)}`;

/**
 * An OpenAI stand-in that quotes back everything it was sent, headers included (as an error
 * message that repeats the key would), a few bytes at a time so the key straddles chunks.
 */
function startEchoUpstream(): Promise<Server> {
  const server = createServer((request, response) => {
    const body: Buffer[] = [];
    request.on("data", (chunk: Buffer) => body.push(chunk));
    request.on("end", () => {
      const echo = JSON.stringify({
        error: { message: `Incorrect API key provided: ${String(request.headers.authorization)}` },
        headers: request.headers,
        body: Buffer.concat(body).toString("utf8"),
      });
      response.writeHead(401, {
        "content-type": "application/json",
        "x-echo": String(request.headers.authorization),
      });
      const send = (at: number): void => {
        if (at >= echo.length) return void response.end();
        response.write(echo.slice(at, at + 7));
        setTimeout(() => send(at + 7), 1);
      };
      send(0);
    });
  });
  return new Promise((resolve) => server.listen(0, "127.0.0.1", () => resolve(server)));
}

describe("host secrets", () => {
  let repo: TempRepo;
  let drydock: InMemoryDrydock;
  const logs: string[] = [];
  const mcpLogs: string[] = [];
  let removeSink: () => void = () => undefined;
  let upstream: Server;
  const saved = {
    key: process.env.OPENAI_API_KEY,
    base: process.env.DRYDOCK_OPENAI_BASE_URL,
    anthropic: process.env.ANTHROPIC_API_KEY,
  };

  beforeAll(async () => {
    upstream = await startEchoUpstream();
    process.env.OPENAI_API_KEY = KEY;
    process.env.ANTHROPIC_API_KEY = ESCAPED_KEY;
    process.env.DRYDOCK_OPENAI_BASE_URL = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`;
    setLogLevel("debug");
    removeSink = addLogSink((record) => logs.push(record.message));
    repo = tempRepo({ "README.md": "hello\n" });
    drydock = await inMemoryDrydock({ repo: repo.path, ...(await serverExtensions({})) });
    drydock.client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => {
      mcpLogs.push(JSON.stringify(n.params.data));
    });
    await drydock.client.setLoggingLevel("debug");
  });

  afterAll(async () => {
    await drydock?.[Symbol.asyncDispose]();
    repo?.[Symbol.dispose]();
    removeSink();
    setLogLevel("info");
    upstream?.closeAllConnections();
    upstream?.close();
    for (const [name, value] of [
      ["OPENAI_API_KEY", saved.key],
      ["DRYDOCK_OPENAI_BASE_URL", saved.base],
      ["ANTHROPIC_API_KEY", saved.anthropic],
    ] as const) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
  });

  let gatewayStarted: Promise<unknown> | undefined;
  /** An aider call on the offline model starts the session's gateway and the relay in the box. */
  const startGateway = () =>
    (gatewayStarted ??= drydock.client
      .callTool(
        {
          name: "aider_ai_code",
          arguments: {
            ai_coding_prompt: "no rule matches this",
            relative_editable_files: ["README.md"],
            model: "openai/drydock-offline",
          },
        },
        undefined,
        { timeout: 170_000 },
      )
      .then(ok));

  /** Runs a bash command with progress on; returns the reply's text and every progress message. */
  const bash = async (command: string): Promise<{ text: string; progress: string[] }> => {
    const progress: string[] = [];
    const reply = await drydock.client.callTool({ name: "bash", arguments: { command } }, undefined, {
      onprogress: (p) => progress.push(p.message ?? ""),
    });
    ok(reply);
    return { text: JSON.stringify(reply), progress };
  };

  it("redacts a key the box prints from the answer and its progress, however the box splits it", async () => {
    const head = KEY.slice(0, HALF);
    const tail = KEY.slice(HALF);
    const attempts = [
      // Plain, on a line of its own and in the middle of one.
      `echo '${head}''${tail}'; echo "token=${head}${tail};"`,
      // Split across two writes with a pause, so the halves arrive in different chunks.
      `printf '%s' '${head}'; sleep 0.5; printf '%s\\n' '${tail}'`,
      // Decorated with terminal escapes and a carriage-return redraw that a terminal would hide.
      `printf '%s\\033[0m%s\\n' '${head}' '${tail}'; printf 'x\\r%s%s\\n' '${head}' '${tail}'`,
      // Without a final newline.
      `printf '%s%s' '${head}' '${tail}'`,
    ];
    for (const command of attempts) {
      const { text, progress } = await bash(command);
      expect(text, command).not.toContain(KEY);
      expect(text, command).toContain("[redacted]");
      const streamed = progress.join("");
      expect(streamed, command).not.toContain(KEY);
      expect(
        progress.some((p) => p.includes(head) || p.includes(tail)),
        JSON.stringify(progress),
      ).toBe(false);
    }
  });

  it("redacts a key holding a quote and a backslash from the text and the object alike", async () => {
    const escaped = JSON.stringify(ESCAPED_KEY).slice(1, -1);
    const { text, progress } = await bash(
      `printf '%s\\n' '${ESCAPED_KEY}' 'and on stderr:' >&2; printf '%s\\n' '${ESCAPED_KEY}'`,
    );
    expect(text).not.toContain(escaped);
    expect(text).not.toContain(ESCAPED_KEY);
    const reply = JSON.parse(text) as {
      content: Array<{ text: string }>;
      structuredContent: Record<string, string>;
    };
    expect(reply.structuredContent.stdout).toBe("[redacted]\n");
    expect(reply.structuredContent.stderr).toBe("[redacted]\nand on stderr:\n");
    expect(reply.content[0]!.text).toContain("[redacted]");
    expect(progress.join("\n")).not.toContain(ESCAPED_KEY);
  });

  it("redacts the key from error messages, drydock's logs and the MCP logging messages", async () => {
    const error = failure(
      await drydock.client.callTool({
        name: "file_editor",
        arguments: { operation: "view", path: `${KEY}.txt` },
      }),
    );
    expect(error).toContain("[redacted]");
    expect(error).not.toContain(KEY);
    await bash(`echo ${KEY} > key.txt && cat key.txt`);
    expect(logs.length).toBeGreaterThan(0);
    expect(logs.join("\n")).not.toContain(KEY);
    expect(mcpLogs.join("\n")).not.toContain(KEY);
  });

  it("keeps the key out of what the engine records about the box and its programs", async () => {
    // With the gateway and relay started, every program drydock runs in the box has run once.
    expect(JSON.stringify(await startGateway())).not.toContain(KEY);
    const [session] = drydock.server.manager.list();
    const engine = await Engine.connect();
    const info = await engine.inspect(session!.box.id);
    expect(JSON.stringify(info)).not.toContain(KEY);
    const execs = await Promise.all(
      (info.ExecIDs ?? []).map((id) =>
        engine.docker
          .getExec(id)
          .inspect()
          .catch(() => undefined),
      ),
    );
    expect(execs.filter(Boolean).length).toBeGreaterThan(0);
    expect(JSON.stringify(execs)).not.toContain(KEY);
    // What was looked at holds the box's environment and the programs drydock runs there.
    expect(info.Config.Env).toContain("HOME=/home/agent");
    expect(JSON.stringify(execs)).toContain("/dev/stdin");
  });

  it("never hands the key to the box, even when the upstream echoes it back", async () => {
    await startGateway();
    // The box checks for itself what came back through the relay; only its verdict leaves.
    const probe = `python3 - <<'EOF'
import json, urllib.request, urllib.error
request = urllib.request.Request("http://127.0.0.1:47011/openai/v1/chat/completions",
    data=json.dumps({"model": "gpt-4o", "messages": [{"role": "user", "content": "hi"}]}).encode(),
    headers={"content-type": "application/json", "authorization": "Bearer drydock-dummy-key"})
try:
    response = urllib.request.urlopen(request, timeout=30)
    status, headers, body = response.status, str(response.headers), response.read().decode()
except urllib.error.HTTPError as error:
    status, headers, body = error.code, str(error.headers), error.read().decode()
key = "${KEY.slice(0, HALF)}" + "${KEY.slice(HALF)}"
print(status, "echoed" if "Incorrect API key provided" in body else "not-echoed",
      "LEAKED" if key in body or key in headers else "clean", body.count("[redacted]"))
EOF`;
    const verdict = ok(await drydock.client.callTool({ name: "bash", arguments: { command: probe } }));
    expect(verdict.stdout).toMatch(/^401 echoed clean [1-9]\d*\n$/);
  });
});
