/**
 * Durable sessions: with `serve --keep-sessions` a session outlives a server killed with SIGKILL;
 * a server started again with the same state directory adopts it when a client resumes it with the
 * session's secret, with its edits, its task stack and its audit log. A kept box is reaped once its --keep-ttl has passed,
 * and boxes that were not kept (another server's, an idle warm box) are reaped as before.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { afterAll, afterEach, beforeAll, describe, expect, inject, it } from "vitest";
import { LABEL_KEPT_UNTIL, LABEL_POOL, LABEL_SESSION, LABEL_STATE } from "../../src/engine/labels.js";
import { failure, ok } from "../helpers/mcp-client.js";
import { spawnHttpServer, stopServer } from "../helpers/http-server.js";
import { tempRepo, type TempRepo } from "../helpers/repos.js";
import { testEngine } from "../helpers/sessions.js";

const cli = join(process.cwd(), "dist", "cli", "main.js");

async function connect(url: string, token: string): Promise<Client> {
  const client = new Client({ name: "durable", version: "1" });
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

/** The CLI's stdout (a verb that reads the state directory `env` names). */
async function drydockCli(args: string[], env: NodeJS.ProcessEnv): Promise<string> {
  const child = spawn(process.execPath, [join(process.cwd(), "dist", "cli", "main.js"), ...args], {
    env,
    stdio: ["ignore", "pipe", "inherit"],
  });
  let out = "";
  child.stdout!.on("data", (d: Buffer) => (out += d.toString()));
  const code = await new Promise((resolve) => child.on("close", resolve));
  expect(code, `drydock ${args.join(" ")}`).toBe(0);
  return out;
}

async function killHard(child: ChildProcess): Promise<void> {
  const exited = new Promise((resolve) => child.once("exit", resolve));
  child.kill("SIGKILL");
  await exited;
}

describe("durable sessions", () => {
  let repo: TempRepo;
  let state: string;
  const token = `t-${Math.random().toString(36).slice(2)}`;
  const spawned: ChildProcess[] = [];
  const clients: Client[] = [];

  beforeAll(() => {
    repo = tempRepo({ "README.md": "hello\n" });
  });

  afterEach(async () => {
    for (const client of clients.splice(0)) await client.close().catch(() => undefined);
    for (const child of spawned.splice(0)) {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
    }
    // Kept boxes stay by design: this test's state directory holds only its own.
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

  async function serve(args: string[], extra: Record<string, string> = {}) {
    const server = await spawnHttpServer({ repo: repo.path, env: env(extra), args });
    spawned.push(server.child);
    const client = await connect(server.url, token);
    clients.push(client);
    return { ...server, client };
  }

  it("a kept session survives SIGKILL: a restarted server continues it with its edits, its task stack and its log", async () => {
    state = mkdtempSync(join(tmpdir(), "drydock-state-"));
    const first = await serve(["--keep-sessions", "--pool", "1"]);
    const call = async (name: string, args: Record<string, unknown>, client = first.client) =>
      ok(await client.callTool({ name, arguments: { ...args, session_id: id } }));
    const created = ok(await first.client.callTool({ name: "session_create", arguments: {} }));
    const id = created.session_id as string;
    const secret = created.session_secret as string;
    await call("file_editor", {
      operation: "create",
      path: "notes.txt",
      content: "edited before the crash\n",
    });
    await call("bash", { command: "echo changed >> README.md" });
    await call("create_new_task", { title: "Carry on after the crash", body: "it must survive" });
    const engine = await testEngine();
    const [box] = await engine.listBoxes(LABEL_SESSION, id);
    expect(box?.labels[LABEL_KEPT_UNTIL], "the box is labelled kept").toMatch(/^\d+$/);
    // The pool refilled: an idle warm box, which is not a session and must not be kept.
    await expect
      .poll(async () => (await engine.listBoxes(LABEL_POOL)).filter((b) => b.labels[LABEL_STATE] === state), {
        timeout: 60_000,
        interval: 500,
      })
      .not.toHaveLength(0);
    const idle = (await engine.listBoxes(LABEL_POOL))
      .filter((b) => b.labels[LABEL_STATE] === state && b.labels[LABEL_SESSION] !== id)
      .map((b) => b.labels[LABEL_SESSION]!);
    expect(idle.length).toBeGreaterThan(0);
    // A command in flight when the server dies: its "running" line is in the log.
    void first.client
      .callTool({ name: "bash", arguments: { command: "sleep 600", session_id: id } }, undefined, {
        timeout: 600_000,
      })
      .catch(() => undefined);
    const logPath = join(state, "audit", `${id}.jsonl`);
    await expect
      .poll(() => readFileSync(logPath, "utf8").includes('"command":"sleep 600"'), { timeout: 15_000 })
      .toBe(true);
    const linesBefore = readFileSync(logPath, "utf8").trim().split("\n").length;

    await killHard(first.child);
    // Reaping every second: the kept box must stay through several rounds.
    const second = await serve(["--keep-sessions", "--pool", "0"], { DRYDOCK_REAP_INTERVAL_S: "1" });
    await expect
      .poll(async () => (await Promise.all(idle.map(boxesOf))).every((n) => n === 0), {
        timeout: 15_000,
      })
      .toBe(true);
    await new Promise((resolve) => setTimeout(resolve, 2500));
    expect(await boxesOf(id), "the kept box outlived its server").toBe(1);
    // Running, not only there: where it stopped, how (exit code, OOM, the runtime's error) says why.
    const [kept] = await engine.listBoxes(LABEL_SESSION, id);
    const stopped = await engine.docker.getContainer(kept!.id).inspect();
    expect(stopped.State.Running, `the kept box stopped: ${JSON.stringify(stopped.State)}`).toBe(true);

    // A new client resumes the session: the workspace, the task stack and the log continue.
    await call("session_resume", { session_secret: secret }, second.client);
    const read = await call("bash", { command: "cat notes.txt README.md" }, second.client);
    expect(read.stdout).toBe("edited before the crash\nhello\nchanged\n");
    const task = await call("get_current_task", {}, second.client);
    expect(JSON.stringify(task)).toContain("Carry on after the crash");
    const diff = await call("session_diff", {}, second.client);
    expect(JSON.stringify(diff)).toContain("+changed");
    const entries = readFileSync(logPath, "utf8")
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as { tool: string; args?: { command?: string } });
    expect(entries.length).toBeGreaterThan(linesBefore);
    expect(entries.slice(0, linesBefore).map((e) => e.tool)).toContain("file_editor");
    const after = entries.slice(linesBefore);
    expect(after.map((e) => e.tool)).toContain("session_adopted");
    expect(after.some((e) => e.tool === "bash" && e.args?.command === "cat notes.txt README.md")).toBe(true);

    // The dead server's shells, and the command they were running, were ended at the adoption:
    // one persistent shell runs (the new one), and the sleep is gone. ps writes a file before grep
    // reads it: in a pipeline, grep's process is a fork of the shell until it execs, and ps could
    // count it as a second shell.
    const shells = await call(
      "bash",
      {
        command:
          "ps -eo args= > /tmp/ps.txt; grep -c '^bash --noprofile --norc /dev/stdin$' /tmp/ps.txt; grep -c '^sleep 600$' /tmp/ps.txt; cat /tmp/ps.txt >&2",
      },
      second.client,
    );
    expect(shells.stdout, String(shells.stderr)).toBe("1\n0\n");
    // Read after the fact, the cut-off call is shown as interrupted, not as running forever.
    const shown = await drydockCli(["sessions", "log", id, "--json"], env());
    const sleeps = shown
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as { args?: { command?: string }; outcome: Record<string, unknown> })
      .filter((e) => e.args?.command === "sleep 600");
    expect(sleeps).toHaveLength(1);
    expect(sleeps[0]!.outcome).toMatchObject({ interrupted: true, ok: false });

    // The session is now that client's: another client cannot use it.
    const other = await connect(second.url, token);
    clients.push(other);
    expect(
      failure(await other.callTool({ name: "bash", arguments: { command: "true", session_id: id } })),
    ).toMatch(new RegExp(id));
    // Still the first client's, and the reaper leaves the adopted box alone.
    await new Promise((resolve) => setTimeout(resolve, 2000));
    expect((await call("bash", { command: "echo still" }, second.client)).stdout).toBe("still\n");
    await stopServer(second.child);
  });

  it("a session kept at a clean shutdown is continued by the next server as well", async () => {
    state = mkdtempSync(join(tmpdir(), "drydock-state-"));
    const first = await serve(["--keep-sessions", "--pool", "0"]);
    const created = ok(await first.client.callTool({ name: "session_create", arguments: {} }));
    const id = created.session_id as string;
    ok(
      await first.client.callTool({
        name: "bash",
        arguments: { command: "echo kept > kept.txt", session_id: id },
      }),
    );
    await stopServer(first.child);
    const second = await serve(["--keep-sessions", "--pool", "0"]);
    ok(
      await second.client.callTool({
        name: "session_resume",
        arguments: { session_id: id, session_secret: created.session_secret },
      }),
    );
    const read = ok(
      await second.client.callTool({ name: "bash", arguments: { command: "cat kept.txt", session_id: id } }),
    );
    expect(read.stdout).toBe("kept\n");
    // Destroyed by the client that holds it: the box and its record go.
    ok(await second.client.callTool({ name: "session_destroy", arguments: { session_id: id } }));
    expect(await boxesOf(id)).toBe(0);
    expect(existsSync(join(state, "sessions", `${id}.json`))).toBe(false);
    await stopServer(second.child);
  });

  it("a kept box is reaped once its --keep-ttl has passed; a box that was not kept is reaped at once", async () => {
    state = mkdtempSync(join(tmpdir(), "drydock-state-"));
    const keeping = await serve(["--keep-sessions", "--keep-ttl", "40", "--pool", "0"]);
    const keptReply = ok(await keeping.client.callTool({ name: "session_create", arguments: {} }));
    const kept = keptReply.session_id as string;
    const [box] = await (await testEngine()).listBoxes(LABEL_SESSION, kept);
    const keptUntil = Number(box!.labels[LABEL_KEPT_UNTIL]) * 1000;
    expect(keptUntil - Date.now()).toBeGreaterThan(30_000);
    expect(keptUntil - Date.now()).toBeLessThanOrEqual(40_000);
    await killHard(keeping.child);

    const plain = await serve(["--pool", "0"]);
    const notKept = ok(await plain.client.callTool({ name: "session_create", arguments: {} }))
      .session_id as string;
    await killHard(plain.child);

    const third = await serve(["--keep-sessions", "--pool", "0"], { DRYDOCK_REAP_INTERVAL_S: "1" });
    await expect.poll(() => boxesOf(notKept), { timeout: 15_000 }).toBe(0);
    expect(Date.now(), "the check is made before the time to live passed").toBeLessThan(keptUntil);
    expect(await boxesOf(kept)).toBe(1);
    await expect
      .poll(() => boxesOf(kept), { timeout: keptUntil - Date.now() + 15_000, interval: 1000 })
      .toBe(0);
    expect(Date.now()).toBeGreaterThanOrEqual(keptUntil);
    // The reaper removes the box, then its gateway directory and its record: the record follows.
    await expect
      .poll(() => existsSync(join(state, "sessions", `${kept}.json`)), {
        timeout: 5_000,
        message: "its record went with it",
      })
      .toBe(false);
    // Past its time it cannot be resumed either, even with its secret.
    expect(
      failure(
        await third.client.callTool({
          name: "session_resume",
          arguments: { session_id: kept, session_secret: keptReply.session_secret },
        }),
      ),
    ).toMatch(new RegExp(`session ${kept} not found`));
    await stopServer(third.child);
  });

  it.each([
    [["--keep-sessions", "--keep-ttl", "0"], /--keep-ttl.*"0" is not a number of seconds/],
    [["--keep-ttl", "60"], /--keep-ttl.*add --keep-sessions/],
  ])("serve %j stops with exit 2 and the fix", async (args, message) => {
    state = mkdtempSync(join(tmpdir(), "drydock-state-"));
    const child = spawn(
      process.execPath,
      [
        cli,
        "serve",
        "--http",
        "--port",
        "0",
        "--repo",
        repo.path,
        "--image",
        inject("sandboxImage"),
        ...args,
      ],
      { env: env(), stdio: ["ignore", "ignore", "pipe"] },
    );
    spawned.push(child);
    let err = "";
    child.stderr.on("data", (d: Buffer) => (err += d.toString()));
    const code = await new Promise((resolve) => child.once("exit", resolve));
    expect(code, err).toBe(2);
    expect(err).toMatch(message);
  });
});
