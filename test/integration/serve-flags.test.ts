/**
 * `drydock serve`'s flags are checked before anything starts: a flag that cannot work stops the
 * command at once with one line naming the flag and the fix, exit code 2, and no box, no pool and
 * no listening socket. `--offline-script` reaches a server started with a clean environment.
 */
import { spawn } from "node:child_process";
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { Engine } from "../../src/engine/engine.js";
import { LABEL_OWNER } from "../../src/engine/labels.js";
import { ok } from "../helpers/mcp-client.js";
import { writeZebraScript } from "../helpers/offline-script.js";
import { tempRepo, type TempRepo } from "../helpers/repos.js";

const cli = join(process.cwd(), "dist", "cli", "main.js");

interface Served {
  code: number | null;
  stderr: string;
  pid: number;
}

let work: string;
let state: string;
let repo: TempRepo;
let busy: Server;
let busyPort: number;

/** Runs `drydock serve` with the flags; a server that starts anyway is stopped after 30 s. */
function serve(args: string[], env: NodeJS.ProcessEnv = {}): Promise<Served> {
  const child = spawn(process.execPath, [cli, "serve", "--repo", repo.path, ...args], {
    env: { ...process.env, DRYDOCK_STATE_DIR: state, DRYDOCK_POOL: "1", ...env },
    stdio: ["pipe", "ignore", "pipe"],
  });
  let stderr = "";
  child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
  const timer = setTimeout(() => child.kill("SIGTERM"), 30_000);
  return new Promise((resolve) =>
    child.on("close", (code) => {
      clearTimeout(timer);
      resolve({ code, stderr, pid: child.pid! });
    }),
  );
}

async function boxesOf(pid: number): Promise<string[]> {
  const engine = await Engine.connect();
  return (await engine.listBoxes(LABEL_OWNER))
    .filter((b) => b.labels[LABEL_OWNER]?.split("/")[1] === String(pid))
    .map((b) => b.id);
}

beforeAll(async () => {
  work = mkdtempSync(join(tmpdir(), "drydock-serve-flags-"));
  state = join(work, "state");
  repo = tempRepo({ "README.md": "hello\n" });
  busy = createServer();
  await new Promise<void>((resolve) => busy.listen(0, "127.0.0.1", resolve));
  busyPort = (busy.address() as { port: number }).port;
  writeFileSync(join(work, "broken.json"), "{ not json");
  writeFileSync(join(work, "keys.env"), "DRYDOCK_UNUSED=1\n");
  // Node 20 itself stops at an --env-file that does not exist, wherever it is on the command line.
  writeFileSync(join(work, "other.env"), "DRYDOCK_UNUSED=2\n");
});

afterAll(async () => {
  await new Promise((resolve) => busy?.close(resolve));
  repo?.[Symbol.dispose]();
  rmSync(work, { recursive: true, force: true });
});

describe("drydock serve's flags", () => {
  it("refuses each flag that cannot work before anything starts: one line naming it, exit 2", async () => {
    const image = inject("sandboxImage");
    const cases: Array<[string[], RegExp, NodeJS.ProcessEnv?]> = [
      [["--http", "--port", "99999"], /^--port: "99999" is not a whole number from 0 to 65535/],
      [
        ["--http", "--port", String(busyPort)],
        new RegExp(`^--port: ${busyPort} is already in use on 127\\.0\\.0\\.1`),
      ],
      [
        ["--http", "--host", "192.0.2.1", "--port", "0"],
        /^--host: 192\.0\.2\.1 is not an address of this machine/,
      ],
      [
        ["--memory-mb", "1"],
        /^--memory-mb: "1" is not a whole number from 128 to \d+ \(the engine's host has \d+ MiB\)/,
      ],
      [
        ["--cpus", "100000"],
        /^--cpus: "100000" is not a number from 0\.01 to \d+ \(the engine's host has \d+ CPUs?\)/,
      ],
      [["--pool", "100000"], /^--pool: "100000" is not a whole number from 0 to \d+/],
      [
        [],
        /^DRYDOCK_POOL: "two" is not a whole number .*; set it to a number such as 1, or pass --pool N/,
        { DRYDOCK_POOL: "two" },
      ],
      [["--pool-ttl", "0"], /^--pool-ttl: "0" is not a number of seconds above 0/],
      [
        ["--pool", "3", "--pool-max", "2"],
        /^--pool-max: 2 is below --pool 3, the pool's base; pass --pool-max 3 or more/,
      ],
      [
        ["--pool", "0", "--pool-max", "4"],
        /^--pool-max: is the most a warm pool grows to, and --pool 0 keeps none/,
      ],
      [["--pool-max", "100000"], /^--pool-max: "100000" is not a whole number from 0 to \d+/],
      [["--timeout", "soon"], /^--timeout: "soon" is not a number of seconds above 0/],
      [["--max-sessions", "0"], /^--max-sessions: "0" is not a whole number of 1 or more/],
      [
        ["--max-output-bytes", "500"],
        /^--max-output-bytes: "500" is not a whole number from 30000 to 268435456 .*write e\.g\. --max-output-bytes 16777216/,
      ],
      [["--memory-reserve-mb", "lots"], /^--memory-reserve-mb: "lots" is not a whole number from 0 to \d+/],
      [
        ["--memory-reserve-mb", "100000000"],
        /^--memory-reserve-mb: "100000000" is not a whole number from 0 to \d+ \(the engine's host has \d+ MiB, and a new session counts 69\); write e\.g\. --memory-reserve-mb 4096/,
      ],
      [["--max-llm-requests", "1.5"], /^--max-llm-requests: "1\.5" is not a whole number of 0 or more/],
      [["--max-llm-cost-usd", "-1"], /^--max-llm-cost-usd: "-1" is not a number of 0 or more/],
      [["--keys-file", join(work, "missing.env")], /^--keys-file: .*missing\.env does not exist/],
      [
        ["--keys-file", join(work, "keys.env"), "--env-file", join(work, "other.env")],
        /^--keys-file: and --env-file name different files/,
      ],
      [["--offline-script", join(work, "missing.json")], /^--offline-script: .*missing\.json does not exist/],
      [["--offline-script", join(work, "broken.json")], /^--offline-script: /],
      [["--llm", "sometimes"], /^--llm: /],
      [["--llm", `replay:${join(work, "missing.jsonl")}`], /^--llm: .*missing\.jsonl does not exist/],
      [["--model", "gpt-4o"], /^--model: gpt-4o needs OPENAI_API_KEY/, { OPENAI_API_KEY: "" }],
      [
        ["--network", "drydock-no-such-network"],
        /^--network: the engine has no network "drydock-no-such-network"/,
      ],
      [["--image", "drydock-no-such-image:1"], /^--image: drydock-no-such-image:1 is not in the engine/],
      [["--allow-repo", work], /^--allow-repo: .* is not inside a git repository/],
      [["--no-such-flag"], /^error: unknown option '--no-such-flag'/],
    ];
    // Four at a time: each is a node process talking to the engine.
    const results: Array<{ flags: string[]; message: RegExp; served: Served }> = [];
    for (let i = 0; i < cases.length; i += 4) {
      const batch = cases.slice(i, i + 4).map(async ([flags, message, env]) => {
        const args = flags.includes("--image") ? flags : [...flags, "--image", image];
        return { flags, message, served: await serve(args, env) };
      });
      results.push(...(await Promise.all(batch)));
    }
    for (const { flags, message, served } of results) {
      const label = flags.join(" ") || "DRYDOCK_POOL=two";
      const lines = served.stderr.trim().split("\n");
      expect(lines[0]!.replace(/^drydock: /, ""), label).toMatch(message);
      expect(
        lines.slice(1).filter((l) => l !== "(see --help)"),
        label,
      ).toEqual([]);
      expect(served.code, label).toBe(2);
      expect(await boxesOf(served.pid), label).toEqual([]);
    }
    // Nothing started: no token file, no gateway directory.
    expect(readdirSync(work).sort()).toEqual(["broken.json", "keys.env", "other.env"]);
  });

  it("reads --env-file, the older name of --keys-file, as its own flag", async () => {
    const served = await serve(["--env-file", join(work, "keys.env"), "--http", "--port", "99999"]);
    expect(served.stderr).toMatch(/^drydock: --port: "99999"/);
    expect(served.code).toBe(2);
  });
});

describe("drydock serve --offline-script", () => {
  it("gives the offline model the script, for a client that starts the server with a clean environment", async () => {
    const script = writeZebraScript(join(work, "script.json"));
    const client = new Client({ name: "clean-env", version: "1" });
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
          "--pool",
          "0",
          "--llm",
          "offline",
          "--offline-script",
          script,
          "--tools",
          "core,aider",
        ],
        // What an MCP client passes: hardly anything. No DRYDOCK_OFFLINE_SCRIPT.
        env: {
          PATH: process.env.PATH!,
          HOME: process.env.HOME!,
          DRYDOCK_STATE_DIR: state,
          ...(process.env.DOCKER_HOST ? { DOCKER_HOST: process.env.DOCKER_HOST } : {}),
        },
        stderr: "ignore",
      }),
    );
    try {
      const edited = ok(
        await client.callTool(
          {
            name: "aider_ai_code",
            arguments: {
              ai_coding_prompt: "the zebra change, please",
              relative_editable_files: ["README.md"],
              model: "openai/drydock-offline",
            },
          },
          undefined,
          { timeout: 170_000 },
        ),
      );
      expect(edited.success, JSON.stringify(edited)).toBe(true);
      expect(edited.diff).toContain("+hello from the zebra script");
    } finally {
      await client.close();
    }
  });
});

describe("drydock serve on a host with no provider key", () => {
  it("serves core,aider, and aider_ai_code with no model refuses at once, saying where a key goes", async () => {
    const client = new Client({ name: "no-key", version: "1" });
    let stderr = "";
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [
        ...[cli, "serve", "--repo", repo.path, "--image", inject("sandboxImage")],
        ...["--pool", "0", "--tools", "core,aider"],
      ],
      // What a user's MCP client passes when no key was configured: no *_API_KEY, no --llm.
      env: {
        PATH: process.env.PATH!,
        HOME: process.env.HOME!,
        DRYDOCK_STATE_DIR: state,
        ...(process.env.DOCKER_HOST ? { DOCKER_HOST: process.env.DOCKER_HOST } : {}),
      },
      stderr: "pipe",
    });
    transport.stderr?.on("data", (d: Buffer) => (stderr += d.toString()));
    await client.connect(transport);
    try {
      const started = Date.now();
      const reply = (await client.callTool({
        name: "aider_ai_code",
        arguments: { ai_coding_prompt: "fix the bug", relative_editable_files: ["README.md"] },
      })) as { isError?: boolean; content: Array<{ text: string }> };
      expect(Date.now() - started).toBeLessThan(10_000);
      expect(reply.isError).toBe(true);
      const answer = JSON.parse(reply.content[0]!.text) as { success: boolean; error: string };
      expect(answer.success).toBe(false);
      expect(answer.error).toMatch(
        /^model: no model provider key on the host.*ANTHROPIC_API_KEY, OPENAI_API_KEY or GEMINI_API_KEY.*--keys-file.*openai\/drydock-offline.*--llm offline/,
      );
      expect(stderr).toMatch(/aider_ai_code will refuse calls that name no model/);
      const ran = ok(await client.callTool({ name: "bash", arguments: { command: "echo still here" } }));
      expect(ran.stdout).toBe("still here\n");
    } finally {
      await client.close();
    }
  });

  it("does not warn about aider's model when the tools served (the default, core) leave aider out", async () => {
    const client = new Client({ name: "no-key-core", version: "1" });
    let stderr = "";
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [cli, "serve", "--repo", repo.path, "--image", inject("sandboxImage"), "--pool", "0"],
      env: {
        PATH: process.env.PATH!,
        HOME: process.env.HOME!,
        DRYDOCK_STATE_DIR: state,
        ...(process.env.DOCKER_HOST ? { DOCKER_HOST: process.env.DOCKER_HOST } : {}),
      },
      stderr: "pipe",
    });
    transport.stderr?.on("data", (d: Buffer) => (stderr += d.toString()));
    await client.connect(transport);
    try {
      const names = (await client.listTools()).tools.map((t) => t.name);
      expect(names).not.toContain("aider_ai_code");
      expect(names).toContain("bash");
      expect(stderr).not.toMatch(/aider_ai_code will refuse/);
    } finally {
      await client.close();
    }
  });
});
