/**
 * Boxes whose drydock died are removed however the death happened and however soon the next
 * drydock comes: at its start (even when the dead process has not been collected by its parent
 * yet, a zombie) and, while it runs, at its reaping interval. Boxes of a live drydock with the
 * same state directory stay.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { afterAll, afterEach, beforeAll, describe, expect, inject, it } from "vitest";
import { LABEL_SESSION, LABEL_STATE } from "../../src/engine/labels.js";
import { ok } from "../helpers/mcp-client.js";
import { spawnHttpServer, stopServer } from "../helpers/http-server.js";
import { tempRepo, type TempRepo } from "../helpers/repos.js";
import { testEngine } from "../helpers/sessions.js";

const cli = join(process.cwd(), "dist", "cli", "main.js");

interface Started {
  /** The drydock process itself (not a wrapper around it). */
  pid: number;
  url: string;
  /** What was spawned: drydock, or the parent that never collects it. */
  child: ChildProcess;
}

/**
 * `drydock serve --http` whose parent never collects it once it dies (a shell that started it in
 * the background and then became another program): killed, it stays a zombie.
 */
function serveUnderParentThatNeverWaits(repo: string, env: NodeJS.ProcessEnv): Promise<Started> {
  const argv = [process.execPath, cli, "serve", "--http", "--port", "0", "--repo", repo];
  argv.push("--image", inject("sandboxImage"));
  const quoted = argv.map((a) => `'${a.replace(/'/g, `'\\''`)}'`).join(" ");
  const child = spawn("sh", ["-c", `${quoted} & echo "pid=$!" >&2; exec sleep 600`], {
    env,
    stdio: ["ignore", "ignore", "pipe"],
  });
  return new Promise((resolve, reject) => {
    let err = "";
    child.stderr!.on("data", (d: Buffer) => {
      err += d.toString();
      const url = /serving MCP on (\S+)/.exec(err)?.[1];
      const pid = /pid=(\d+)/.exec(err)?.[1];
      if (url && pid) resolve({ pid: Number(pid), url, child });
    });
    child.on("exit", () => reject(new Error(`server exited: ${err}`)));
  });
}

async function connect(url: string, token: string): Promise<Client> {
  const client = new Client({ name: "reaping", version: "1" });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(url), {
      requestInit: { headers: { Authorization: `Bearer ${token}` } },
    }),
  );
  return client;
}

async function boxesOf(sessionId: string): Promise<number> {
  return (await (await testEngine()).listBoxes(LABEL_SESSION, sessionId)).length;
}

describe("reaping boxes whose drydock died", () => {
  let repo: TempRepo;
  let state: string;
  const token = `t-${Math.random().toString(36).slice(2)}`;
  const spawned: ChildProcess[] = [];

  beforeAll(() => {
    repo = tempRepo({ "README.md": "hello\n" });
  });

  afterEach(async () => {
    for (const child of spawned.splice(0)) {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
    }
    // Whatever a failed check left: this test's state directory holds only its own boxes.
    const engine = await testEngine();
    for (const box of await engine.listBoxes(LABEL_STATE, state)) await engine.remove(box.id);
    rmSync(state, { recursive: true, force: true });
  });

  afterAll(() => repo?.[Symbol.dispose]());

  const env = (extra: Record<string, string> = {}) => ({
    ...process.env,
    DRYDOCK_STATE_DIR: state,
    DRYDOCK_TOKEN: token,
    ...extra,
  });

  it.each([
    ["collected by its parent at once", false],
    ["left a zombie by a parent that never waits", true],
  ])(
    "a server SIGKILLed with 3 sessions (%s): a restart 1 s later removes its 3 boxes",
    async (_how, zombie) => {
      state = mkdtempSync(join(tmpdir(), "drydock-state-"));
      // Only the start may remove them: the restart does not reap again within this test.
      const first = zombie
        ? await serveUnderParentThatNeverWaits(repo.path, env())
        : await spawnHttpServer({ repo: repo.path, env: env() }).then(({ child, url }) => ({
            pid: child.pid!,
            url,
            child,
          }));
      spawned.push(first.child);
      const client = await connect(first.url, token);
      const ids: string[] = [];
      for (let i = 0; i < 3; i++) {
        ids.push(ok(await client.callTool({ name: "session_create", arguments: {} })).session_id as string);
      }
      for (const id of ids) expect(await boxesOf(id), id).toBe(1);
      process.kill(first.pid, "SIGKILL");
      await new Promise((resolve) => setTimeout(resolve, 1000));
      await client.close().catch(() => undefined);

      const second = await spawnHttpServer({
        repo: repo.path,
        env: env({ DRYDOCK_REAP_INTERVAL_S: "0" }),
      });
      spawned.push(second.child);
      try {
        await expect
          .poll(async () => (await Promise.all(ids.map(boxesOf))).reduce((a, b) => a + b, 0), {
            timeout: 15_000,
          })
          .toBe(0);
      } finally {
        await stopServer(second.child);
      }
    },
  );

  it("a running server removes an orphan that appears while it runs, and keeps a live drydock's box", async () => {
    state = mkdtempSync(join(tmpdir(), "drydock-state-"));
    const server = await spawnHttpServer({
      repo: repo.path,
      env: env({ DRYDOCK_REAP_INTERVAL_S: "1" }),
    });
    spawned.push(server.child);
    try {
      const client = await connect(server.url, token);
      const own = ok(await client.callTool({ name: "session_create", arguments: {} })).session_id as string;
      // Another drydock with the same state directory: `run` holding a session.
      const other = spawn(
        process.execPath,
        [cli, "run", "--repo", repo.path, "--image", inject("sandboxImage"), "--no-env", "--", "sleep 600"],
        { stdio: ["ignore", "ignore", "pipe"], env: env() },
      );
      spawned.push(other);
      let err = "";
      other.stderr.on("data", (d: Buffer) => (err += d.toString()));
      await expect.poll(() => /session (\w+) ready/.exec(err)?.[1], { timeout: 60_000 }).toBeTruthy();
      const orphan = /session (\w+) ready/.exec(err)![1]!;
      // Several reaping rounds pass: a live owner's box stays.
      await new Promise((resolve) => setTimeout(resolve, 3500));
      expect(await boxesOf(orphan)).toBe(1);
      other.kill("SIGKILL");
      await new Promise((resolve) => other.once("exit", resolve));
      await expect.poll(() => boxesOf(orphan), { timeout: 15_000, interval: 500 }).toBe(0);
      // The server's own session is untouched and still works.
      expect(await boxesOf(own)).toBe(1);
      expect(
        ok(await client.callTool({ name: "bash", arguments: { command: "cat README.md", session_id: own } }))
          .stdout,
      ).toBe("hello\n");
      await client.close();
    } finally {
      await stopServer(server.child);
    }
  });
});
