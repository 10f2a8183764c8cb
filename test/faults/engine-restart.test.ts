/**
 * The Docker Engine restarts under a running drydock (`pkill dockerd` and start it again, as
 * scripts/setup.sh would). The test runs its own dockerd, so stopping it cannot touch the engine
 * the other tests share. While the engine is down every call says so; after it is back the lost
 * box is reported as such, the task stack survived, a new session works, and once drydock has
 * stopped a prune leaves nothing behind.
 */
import { mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { afterAll, beforeAll, describe, expect, inject, it, onTestFailed } from "vitest";
import { Engine } from "../../src/engine/engine.js";
import { pruneOrphans } from "../../src/session/orphans.js";
import { failure, ok } from "../helpers/mcp-client.js";
import { PrivateEngine } from "../helpers/private-engine.js";
import { tempRepo, type TempRepo } from "../helpers/repos.js";

const cli = join(process.cwd(), "dist", "cli", "main.js");
const ENGINE_DOWN = /no Docker Engine answers .*Start Docker/s;
const BOX_GONE = /box [0-9a-f]{12} is no longer running: it was stopped or removed outside drydock/;

describe("the Docker Engine restarted under drydock", () => {
  let engine: PrivateEngine;
  let repo: TempRepo;
  let state: string;

  beforeAll(async () => {
    engine = await PrivateEngine.start();
    engine.loadImage(inject("sandboxImage"));
    repo = tempRepo({ "README.md": "hello\n" });
    state = mkdtempSync(join(tmpdir(), "drydock-state-"));
  }, 300_000);

  afterAll(async () => {
    await engine?.[Symbol.asyncDispose]();
    repo?.[Symbol.dispose]();
    rmSync(state, { recursive: true, force: true });
  });

  it(
    "says the engine is down, then that the box is gone; the task stack survives, a new session works, nothing is left",
    {
      timeout: 900_000,
    },
    async () => {
      const shared = await Engine.connect();
      const client = new Client({ name: "restart", version: "1" });
      await client.connect(
        new StdioClientTransport({
          command: process.execPath,
          args: [cli, "serve", "--repo", repo.path, "--image", inject("sandboxImage"), "--tools", "all"],
          env: {
            ...(process.env as Record<string, string>),
            DOCKER_HOST: engine.host,
            DRYDOCK_STATE_DIR: state,
          },
          stderr: "pipe",
        }),
      );
      // What the server said, shown if a step fails: a busy machine makes any step slow, and the
      // log says which one was.
      let serverLog = "";
      (client.transport as StdioClientTransport).stderr?.on("data", (chunk: Buffer) => {
        serverLog += chunk.toString();
      });
      onTestFailed(() => console.log(`drydock serve said:\n${serverLog}`));
      // Every call has a limit well above what any step takes on a busy machine (a session on an
      // engine that has just started takes seconds, not the client's default minute).
      const limit = { timeout: 240_000 };
      const tool = (name: string, args: Record<string, unknown> = {}) =>
        client.callTool({ name, arguments: args }, undefined, limit);
      const id = ok(await tool("session_create")).session_id as string;
      const call = (name: string, args: Record<string, unknown> = {}) =>
        tool(name, { ...args, session_id: id });
      ok(await call("create_new_task", { title: "outlive the engine", body: "" }));
      const inFlight = call("bash", { command: "echo started; sleep 60" });
      await new Promise((resolve) => setTimeout(resolve, 1000));

      await engine.down();
      expect(failure(await inFlight)).toMatch(new RegExp(`${ENGINE_DOWN.source}|${BOX_GONE.source}`, "s"));
      expect(failure(await call("bash", { command: "echo x" }))).toMatch(ENGINE_DOWN);
      expect(failure(await call("session_diff"))).toMatch(ENGINE_DOWN);
      expect(failure(await tool("session_create"))).toMatch(ENGINE_DOWN);
      expect(ok(await call("get_current_task"))).toMatchObject({ task: { title: "outlive the engine" } });
      // The engine the other tests use never noticed.
      expect((await shared.version()).version).toBeTruthy();

      await engine.up();
      expect(failure(await call("bash", { command: "echo x" }))).toMatch(BOX_GONE);
      ok(await call("session_destroy"));
      expect(ok(await tool("bash", { command: "cat README.md" })).stdout).toBe("hello\n");
      expect(ok(await call("get_current_task"))).toMatchObject({ task: { title: "outlive the engine" } });
      await client.close();

      // Once drydock has stopped, a prune (what the next start does) leaves no box and no socket.
      const saved = process.env.DOCKER_HOST;
      process.env.DOCKER_HOST = engine.host;
      try {
        await pruneOrphans(await Engine.connect());
      } finally {
        if (saved === undefined) delete process.env.DOCKER_HOST;
        else process.env.DOCKER_HOST = saved;
      }
      await expect
        .poll(() => engine.docker(["ps", "-a", "--format", "{{.Names}} {{.Status}}"]), { timeout: 20_000 })
        .toBe("");
      expect(readdirSync(join(state, "run"))).toEqual([]);
    },
  );
});
