/**
 * aider_ai_code, job_status and list_models over the built CLI: real aider in a real box, talking
 * through the session's gateway to a loopback stand-in for OpenAI (the offline model's script
 * behind a plain HTTP server) with a fake key the box must never see. Two servers, one box each.
 */
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, readdirSync, rmSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { OfflineModel } from "../../src/gateway/index.js";
import { tempRepo, type TempRepo } from "../helpers/repos.js";

const cli = join(process.cwd(), "dist", "cli", "main.js");
const sample = join(process.cwd(), "examples", "sample-repo");
const KEY = `sk-test-${Math.random().toString(36).slice(2)}${Date.now().toString(36)}`;
const FIX = "Make greet() return 'Hello, NAME!' so the tests pass";
const SLOW = "take your time with greet";
const CALL_TIMEOUT = { timeout: 240_000 };

interface ToolResult {
  content: Array<{ type: string; text: string }>;
  structuredContent?: Record<string, unknown>;
  isError?: boolean;
}

/** The seed's way of reading a reply: the text block is JSON. */
function textJson(result: unknown): Record<string, unknown> {
  const r = result as ToolResult;
  expect(r.isError, r.content[0]?.text).toBeFalsy();
  const parsed = JSON.parse(r.content[0]!.text) as Record<string, unknown>;
  expect(r.structuredContent).toEqual(parsed);
  return parsed;
}

/** The message of an error reply, which is the seed's JSON: {"success": false, "diff", "error"} or {"error"}. */
function errorText(result: unknown): string {
  const r = result as ToolResult;
  expect(r.isError).toBe(true);
  const reply = JSON.parse(r.content[0]!.text) as { success?: boolean; diff?: string; error: string };
  if (reply.success !== undefined)
    expect(reply).toEqual({ success: false, diff: reply.error, error: reply.error });
  return reply.error;
}

function hashOf(text: string): string {
  return execFileSync("git", ["hash-object", "--stdin"], { input: text, encoding: "utf8" })
    .trim()
    .slice(0, 7);
}

const GREET_BEFORE = readFileSync(join(sample, "greet.py"), "utf8");
const GREET_AFTER = GREET_BEFORE.replace('return "Hello " + name', 'return f"Hello, {name}!"');
const EXPECTED_DIFF = [
  "diff --git a/greet.py b/greet.py",
  `index ${hashOf(GREET_BEFORE)}..${hashOf(GREET_AFTER)} 100644`,
  "--- a/greet.py",
  "+++ b/greet.py",
  "@@ -3,4 +3,4 @@",
  " ",
  " def greet(name):",
  '     """Return a friendly greeting for name."""',
  '-    return "Hello " + name',
  '+    return f"Hello, {name}!"',
  "",
].join("\n");

/** OpenAI's API as far as aider needs it, answered by the offline model's default script; it notes every key it is sent. */
class FakeOpenAi {
  readonly authorizations: string[] = [];
  private readonly model = OfflineModel.fromFile();
  private readonly server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on("data", (chunk: Buffer) => chunks.push(chunk));
    request.on("end", () => {
      const body = Buffer.concat(chunks).toString("utf8");
      this.authorizations.push(String(request.headers.authorization));
      // A model that never answers, so that a call can be cancelled while aider waits.
      if (body.includes(SLOW)) return;
      const answer = this.model.answer({ method: request.method ?? "GET", path: request.url ?? "/", body });
      response.writeHead(answer.status, { "content-type": answer.contentType });
      for (const chunk of answer.chunks) response.write(chunk);
      response.end();
    });
  });

  static async start(): Promise<FakeOpenAi> {
    const fake = new FakeOpenAi();
    await new Promise<void>((resolve) => fake.server.listen(0, "127.0.0.1", resolve));
    return fake;
  }

  get url(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  async stop(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise((resolve) => this.server.close(resolve));
  }
}

async function startServer(args: string[], env: Record<string, string>, state: string): Promise<Client> {
  const base = Object.fromEntries(
    Object.entries(process.env).filter(
      ([name, value]) =>
        value !== undefined && !/_API_KEY$|^DRYDOCK_(MODEL|LLM|AIDER_OPTIONS|.*_BASE_URL)$/.test(name),
    ),
  ) as Record<string, string>;
  const client = new Client({ name: "aider-test", version: "1" });
  await client.connect(
    new StdioClientTransport({
      command: process.execPath,
      args: [cli, "serve", "--image", inject("sandboxImage"), "--tools", "all", ...args],
      env: { ...base, DRYDOCK_STATE_DIR: state, ...env },
      stderr: "ignore",
    }),
  );
  return client;
}

function copySample(): TempRepo {
  const files = Object.fromEntries(
    readdirSync(sample).map((name) => [name, readFileSync(join(sample, name), "utf8")]),
  );
  return tempRepo(files);
}

describe("aider_ai_code in the box, behind the gateway", () => {
  let repo: TempRepo;
  let state: string;
  let upstream: FakeOpenAi;
  let client: Client;
  let record: string;

  // bash's text is written for a model (a terminal's view); its object is structuredContent.
  const bash = async (command: string) => {
    const r = (await client.callTool(
      { name: "bash", arguments: { command, timeout_s: 300 } },
      undefined,
      CALL_TIMEOUT,
    )) as ToolResult;
    expect(r.isError, r.content[0]?.text).toBeFalsy();
    return r.structuredContent as Record<string, unknown>;
  };
  const reset = () => bash("git checkout -q -- . && git clean -qfd");
  const aider = async (args: Record<string, unknown>, onprogress?: (message: string) => void) =>
    client.callTool({ name: "aider_ai_code", arguments: args }, undefined, {
      ...CALL_TIMEOUT,
      ...(onprogress ? { onprogress: (p: { message?: string }) => onprogress(p.message ?? "") } : {}),
    });

  beforeAll(async () => {
    repo = copySample();
    state = mkdtempSync(join(tmpdir(), "drydock-state-"));
    record = join(state, "exchanges.jsonl");
    upstream = await FakeOpenAi.start();
    client = await startServer(
      ["--repo", repo.path, "--llm", `record:${record}`],
      { OPENAI_API_KEY: KEY, DRYDOCK_OPENAI_BASE_URL: upstream.url },
      state,
    );
  });

  afterAll(async () => {
    await client?.close();
    await upstream?.stop();
    repo?.[Symbol.dispose]();
    rmSync(state, { recursive: true, force: true });
  });

  it("answers the seed's minimal call with text JSON: success and the exact diff, streaming aider's output", async () => {
    const progress: string[] = [];
    const started = Date.now();
    const result = await aider({ ai_coding_prompt: FIX, relative_editable_files: ["greet.py"] }, (m) =>
      progress.push(m),
    );
    const reply = textJson(result);
    console.log(
      `aider_ai_code took ${Date.now() - started} ms in the box (timings ${JSON.stringify(reply.timings_ms)})`,
    );
    expect(reply.success).toBe(true);
    expect(reply.diff).toBe(EXPECTED_DIFF);
    expect(reply.model).toBe("gpt-4o");
    expect(reply.llm_requests).toBe(1);
    expect((reply.tokens as { input: number }).input).toBeGreaterThan(100);
    expect(reply.cost_usd).toBeGreaterThan(0);
    expect(progress).toContain("Applied edit to greet.py");
    // The key reached the upstream, put there by the gateway on the host.
    expect(upstream.authorizations.length).toBeGreaterThan(0);
    expect(new Set(upstream.authorizations)).toEqual(new Set([`Bearer ${KEY}`]));
    expect(JSON.stringify(progress)).not.toContain(KEY);
    expect((await bash("cat greet.py")).stdout).toBe(GREET_AFTER);
  });

  it("returns success false with aider's message when the SEARCH text does not match", async () => {
    await reset();
    const reply = textJson(
      await aider({ ai_coding_prompt: "stale edit", relative_editable_files: ["greet.py"] }),
    );
    expect(reply.success).toBe(false);
    expect(reply.diff).toContain(
      "SearchReplaceNoExactMatch: This SEARCH block failed to exactly match lines in greet.py",
    );
    expect(reply.diff).not.toContain("Partial diff");
    expect((await bash("git status --porcelain")).stdout).toBe("");
  });

  it("gives a clear error for an unknown model and for a path outside the workspace, symlinks included", async () => {
    const unknown = errorText(
      await aider({
        ai_coding_prompt: FIX,
        relative_editable_files: ["greet.py"],
        model: "acme/no-such-model",
      }),
    );
    expect(unknown).toMatch(
      /^model: "acme\/no-such-model" is not a model the gateway can route.*list_models/,
    );
    const outside = errorText(
      await aider({ ai_coding_prompt: FIX, relative_editable_files: ["../../etc/passwd"] }),
    );
    expect(outside).toMatch(/refused.*outside \/workspace|outside \/workspace.*refused/);
    await bash("ln -sf /etc/hostname escape.py");
    const escape = errorText(await aider({ ai_coding_prompt: FIX, relative_editable_files: ["escape.py"] }));
    expect(escape).toMatch(/"escape.py" is refused: it leads to \/etc\/hostname, outside \/workspace/);
    await bash("rm escape.py");
  });

  it("leaves a read-only file unchanged and shows only what this call changed", async () => {
    await reset();
    await bash("echo 'edited before the call' >> README.md");
    const reply = textJson(
      await aider({
        ai_coding_prompt: "fix greet and also edit the test",
        relative_editable_files: ["greet.py"],
        relative_readonly_files: ["test_greet.py"],
      }),
    );
    expect(reply.success).toBe(true);
    expect(reply.diff).toBe(EXPECTED_DIFF);
    expect(reply.reverted_files).toEqual(["test_greet.py"]);
    expect(reply.message).toMatch(
      /test_greet.py, which is not in relative_editable_files; that change was undone/,
    );
    expect((await bash("git status --porcelain")).stdout).toBe(" M README.md\n M greet.py\n");
    expect((await bash("python3 -m unittest -q 2>&1 | tail -1")).stdout).toBe("OK\n");
  });

  it("keeps the key out of the box: environment, processes, files and aider's output", async () => {
    await reset();
    const started = textJson(
      await aider({
        ai_coding_prompt: SLOW,
        relative_editable_files: ["greet.py"],
        background: true,
        aider_options: { timeout_s: 120 },
      }),
    );
    const jobId = started.job_id as string;
    await expect
      .poll(async () => (await bash("pgrep -f [/]bin/aider || true")).stdout, {
        timeout: 60_000,
        interval: 1000,
      })
      .not.toBe("");
    const environ = (
      await bash("for f in /proc/[0-9]*/environ; do tr '\\0' '\\n' < $f 2>/dev/null; done | sort -u")
    ).stdout as string;
    expect(environ).toContain("OPENAI_API_KEY=drydock-dummy-key");
    expect(environ).toContain("OPENAI_API_BASE=http://127.0.0.1:");
    expect(environ).not.toContain(KEY);
    expect((await bash("ps -eo args")).stdout).not.toContain(KEY);
    const status = textJson(
      await client.callTool(
        { name: "job_status", arguments: { job_id: jobId, cancel: true } },
        undefined,
        CALL_TIMEOUT,
      ),
    );
    expect(status.state).toBe("cancelled");
    expect(status.success).toBe(false);
    expect(status.diff).toMatch(/^aider was cancelled/);
    expect(JSON.stringify(status)).not.toContain(KEY);
    // Two planted markers show the search reaches the writable places; the key must not show up anywhere.
    const grep = await bash(
      "echo drydock-marker-1 > /tmp/marker && echo drydock-marker-2 > ~/marker && " +
        `grep -rsIl --exclude-dir=proc --exclude-dir=sys -F -e '${KEY}' -e drydock-marker- / | sort`,
    );
    expect(grep.stdout).toBe("/home/agent/marker\n/tmp/marker\n");
  });

  it("stops aider in the box when the client cancels the call", async () => {
    await reset();
    const controller = new AbortController();
    const lines: string[] = [];
    const call = client
      .callTool(
        {
          name: "aider_ai_code",
          arguments: { ai_coding_prompt: SLOW, relative_editable_files: ["greet.py"] },
        },
        undefined,
        {
          ...CALL_TIMEOUT,
          signal: controller.signal,
          onprogress: (p: { message?: string }) => {
            lines.push(p.message ?? "");
            if ((p.message ?? "").startsWith("Added greet.py to the chat"))
              setTimeout(() => controller.abort(), 1000);
          },
        },
      )
      .catch((error: Error) => error);
    expect(await call).toBeInstanceOf(Error);
    expect(lines).toContain("Added greet.py to the chat.");
    await expect
      .poll(async () => (await bash("pgrep -f [/]bin/aider || echo none")).stdout, {
        timeout: 30_000,
        interval: 1000,
      })
      .toBe("none\n");
  });

  it("reaches the gateway from inside the box and nothing else", async () => {
    const probe = `python3 - <<'EOF'
import json, urllib.request
def probe(url):
    try:
        return urllib.request.urlopen(url, timeout=5).status
    except Exception as error:
        return type(error).__name__
print(json.dumps({
    "gateway": probe("http://127.0.0.1:47011/offline/v1/models"),
    "public": probe("http://1.1.1.1/"),
    "dns": probe("http://example.com/"),
    "docker_host": probe("http://172.17.0.1/"),
    "upstream": probe("${upstream.url}/v1/models"),
}))
EOF`;
    const result = JSON.parse((await bash(probe)).stdout as string) as Record<string, unknown>;
    expect(result.gateway).toBe(200);
    for (const name of ["public", "dns", "docker_host", "upstream"]) {
      expect(result[name], name).toBe("URLError");
    }
  });

  it("runs in the background and reports the same result through job_status", async () => {
    await reset();
    const started = textJson(
      await aider({ ai_coding_prompt: FIX, relative_editable_files: ["greet.py"], background: true }),
    );
    expect(started.job_id).toMatch(/^job-/);
    expect(started.state).toBe("running");
    let status: Record<string, unknown> = {};
    for (let i = 0; i < 8; i++) {
      status = textJson(
        await client.callTool(
          { name: "job_status", arguments: { job_id: started.job_id, wait_s: 30 } },
          undefined,
          CALL_TIMEOUT,
        ),
      );
      if (status.state !== "running") break;
    }
    expect(status).toMatchObject({ state: "succeeded", success: true, diff: EXPECTED_DIFF, model: "gpt-4o" });
    expect(status.recent_output).toContain("Applied edit to greet.py");
    expect(
      errorText(await client.callTool({ name: "job_status", arguments: { job_id: "job-000000000000" } })),
    ).toMatch(/not found/);
  });

  it("lists aider's models with a case-insensitive filter", async () => {
    const all = textJson(
      await client.callTool({ name: "list_models", arguments: {} }, undefined, CALL_TIMEOUT),
    ).models as string[];
    expect(all.length).toBeGreaterThan(100);
    expect(all).toContain("openai/drydock-offline");
    const sonnet = textJson(
      await client.callTool({ name: "list_models", arguments: { substring: "SONNET" } }),
    ).models as string[];
    expect(sonnet.length).toBeGreaterThan(0);
    expect(sonnet.every((m) => m.toLowerCase().includes("sonnet"))).toBe(true);
    expect(sonnet.length).toBeLessThan(all.length);
  });

  it("replays the recorded run with the upstream stopped, to the same diff, and stops at the request limit", async () => {
    await upstream.stop();
    const replayState = mkdtempSync(join(tmpdir(), "drydock-state-"));
    const replay = await startServer(
      ["--repo", repo.path, "--llm", `replay:${record}`, "--model", "gpt-4o", "--max-llm-requests", "1"],
      {},
      replayState,
    );
    try {
      const first = textJson(
        await replay.callTool(
          {
            name: "aider_ai_code",
            arguments: { ai_coding_prompt: FIX, relative_editable_files: ["greet.py"] },
          },
          undefined,
          CALL_TIMEOUT,
        ),
      );
      expect(first).toMatchObject({ success: true, diff: EXPECTED_DIFF, llm_requests: 1 });
      // Back to the recorded state, so the next request has a recorded answer and meets the limit.
      await replay.callTool({ name: "bash", arguments: { command: "git checkout -q -- ." } });
      const second = textJson(
        await replay.callTool(
          {
            name: "aider_ai_code",
            arguments: { ai_coding_prompt: "stale edit", relative_editable_files: ["greet.py"] },
          },
          undefined,
          CALL_TIMEOUT,
        ),
      );
      expect(second.success).toBe(false);
      expect(second.diff).toMatch(
        /^the LLM gateway refused a model call: LLM request limit reached.*--max-llm-requests/,
      );
      expect(second.llm_requests).toBe(0);
    } finally {
      await replay.close();
      rmSync(replayState, { recursive: true, force: true });
    }
  });
});
