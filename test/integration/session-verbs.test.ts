/**
 * The `drydock sessions` verbs from a second process while `drydock serve` runs: the audit log
 * (also followed live), the diff, show (task stack, last commands), apply, and a person's shell
 * under a real terminal, whose commands the log marks as a person's.
 */
import { execFile, spawn } from "node:child_process";
import { mkdtempSync, readFileSync, realpathSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import type { AuditEntry } from "../../src/session/audit-entry.js";
import { ok } from "../helpers/mcp-client.js";
import { git, tempRepo, type TempRepo } from "../helpers/repos.js";
import { testEngine } from "../helpers/sessions.js";

const cli = join(process.cwd(), "dist", "cli", "main.js");
/** A provider key on the host: it must never reach the log. */
const KEY = "sk-drydock-test-9f8e7d6c5b4a39281706";

describe("drydock sessions verbs, from another process while the server runs", () => {
  let repo: TempRepo;
  let state: string;
  let client: Client;
  let id: string;

  const env = () => ({ ...process.env, DRYDOCK_STATE_DIR: state }) as Record<string, string>;
  async function drydock(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
    try {
      const { stdout, stderr } = await promisify(execFile)(process.execPath, [cli, ...args], {
        env: env(),
        maxBuffer: 16 * 1024 * 1024,
      });
      return { code: 0, stdout, stderr };
    } catch (error) {
      const e = error as { code: number; stdout: string; stderr: string };
      return { code: e.code, stdout: e.stdout, stderr: e.stderr };
    }
  }
  const call = async (name: string, args: Record<string, unknown>) =>
    ok(await client.callTool({ name, arguments: { session_id: id, ...args } }));
  const logEntries = async (): Promise<AuditEntry[]> => {
    const r = await drydock("sessions", "log", id, "--json");
    expect(r.code, r.stderr).toBe(0);
    return r.stdout
      .trimEnd()
      .split("\n")
      .map((l) => JSON.parse(l) as AuditEntry);
  };

  beforeAll(async () => {
    repo = tempRepo({ "README.md": "hello\n", "src/app.py": "print('app')\n" });
    state = mkdtempSync(join(tmpdir(), "drydock-state-"));
    client = new Client({ name: "verbs", version: "1" });
    await client.connect(
      new StdioClientTransport({
        command: process.execPath,
        args: [
          cli,
          "serve",
          ...["--repo", repo.path, "--image", inject("sandboxImage"), "--pool", "0"],
          ...["--llm", "offline", "--max-llm-requests", "1", "--tools", "all"],
        ],
        env: { ...env(), OPENAI_API_KEY: KEY },
        stderr: "ignore",
      }),
    );
    id = ok(await client.callTool({ name: "session_create", arguments: {} })).session_id as string;
  });

  afterAll(async () => {
    await client?.close();
    repo?.[Symbol.dispose]();
    if (state) rmSync(state, { recursive: true, force: true });
  });

  it("reads the log, the diff and the task stack of a session the server is running", async () => {
    await call("bash", { command: "echo changed >> README.md && echo done" });
    await call("bash", { command: "ls no-such-file" });
    await call("file_editor", { operation: "create", path: "notes/plan.md", content: "step one\n" });
    await call("create_new_task", { title: "Write the plan", body: "draft it in notes/plan.md" });

    // Text: a line per call, by a unique prefix of the id.
    const text = await drydock("sessions", "log", id.slice(0, 6));
    expect(text.code, text.stderr).toBe(0);
    expect(text.stdout).toMatch(/drydock\s+session_start\s+\S+/);
    expect(text.stdout).toMatch(/agent\s+bash\s+echo changed >> README.md && echo done → exit 0/);
    expect(text.stdout).toMatch(/agent\s+bash\s+ls no-such-file → exit 2/);
    expect(text.stdout).toMatch(/agent\s+file_editor\s+create notes\/plan.md → ok/);

    // JSON: what each line holds.
    const entries = await logEntries();
    const bash = entries.filter((e) => e.tool === "bash");
    expect(bash[0]).toMatchObject({
      session: id,
      actor: "agent",
      args: { command: "echo changed >> README.md && echo done" },
      outcome: { ok: true, exit_code: 0 },
      output_bytes: 5,
    });
    expect(bash[0]!.duration_ms).toBeGreaterThan(0);
    expect(bash[1]!.outcome).toMatchObject({ ok: false, exit_code: 2 });
    const edit = entries.find((e) => e.tool === "file_editor");
    expect(edit?.args).toEqual({
      operation: "create",
      path: "notes/plan.md",
      content: { chars: 9 },
      session_id: id,
    });

    // On the host, outside anything mounted into the box, private to its owner.
    const logFile = join(state, "audit", `${id}.jsonl`);
    expect(statSync(join(state, "audit")).mode & 0o777).toBe(0o700);
    expect(statSync(logFile).mode & 0o777).toBe(0o600);
    // The box has no host path mounted at all, so none holds the log.
    const engine = await testEngine();
    const boxId = (await engine.listBoxes("drydock.session", id))[0]!.id;
    expect(((await engine.inspect(boxId)).Mounts ?? []).filter((m) => m.Type !== "tmpfs")).toEqual([]);

    const diff = await drydock("sessions", "diff", id);
    expect(diff.code, diff.stderr).toBe(0);
    expect(diff.stdout).toContain("+changed");
    expect(diff.stdout).toContain("b/notes/plan.md");
    expect((await drydock("sessions", "diff", id, "--stat")).stdout).toMatch(/2 files changed/);

    const shown = JSON.parse((await drydock("sessions", "show", id, "--json")).stdout) as {
      record: { repo: string; image: string; limits: { memoryMB: number } };
      owner_alive: boolean;
      last_commands: AuditEntry[];
      task_stack: { current: string | null; tasks: number } | null;
    };
    expect(shown.record.repo).toBe(realpathSync(repo.path));
    expect(shown.record.image).toBe(inject("sandboxImage"));
    expect(shown.record.limits.memoryMB).toBeGreaterThan(0);
    expect(shown.owner_alive).toBe(true);
    expect(shown.last_commands.map((e) => e.args.command)).toContain("ls no-such-file");
    expect(shown.task_stack?.current).toBe("Write the plan");
    const shownText = (await drydock("sessions", "show", id)).stdout;
    expect(shownText).toContain("Write the plan");
    expect(shownText).toMatch(/last commands[\s\S]*ls no-such-file/);
  });

  it("logs aider's calls and each model request through the gateway, refused ones too, with host keys redacted", async () => {
    await call("bash", { command: `echo ${KEY} > /dev/null` });
    const first = await call("aider_ai_code", {
      ai_coding_prompt: "add a comment",
      relative_editable_files: ["src/app.py"],
    });
    expect(first.llm_requests).toBeGreaterThan(0);
    // The session may make one model request (--max-llm-requests 1): the next is refused.
    await client.callTool({
      name: "aider_ai_code",
      arguments: { session_id: id, ai_coding_prompt: "again", relative_editable_files: ["src/app.py"] },
    });
    const entries = await logEntries();
    const requests = entries.filter((e) => e.tool === "llm_request");
    expect(requests[0]).toMatchObject({ actor: "agent", outcome: { ok: true, refused: false, status: 200 } });
    expect((requests[0]!.outcome.tokens as { input: number }).input).toBeGreaterThan(0);
    expect(requests.some((e) => e.outcome.refused === true && /limit/i.test(String(e.outcome.error)))).toBe(
      true,
    );
    const aider = entries.filter((e) => e.tool === "aider_ai_code" && !e.outcome.running);
    expect(aider).toHaveLength(2);
    // Each aider call ran past the moment that leaves a "running" line in the file; read after
    // the fact, the log gives one entry per call.
    expect(entries.filter((e) => e.tool === "aider_ai_code")).toHaveLength(2);
    expect(aider[0]!.args).toMatchObject({
      ai_coding_prompt: "add a comment",
      relative_editable_files: ["src/app.py"],
    });
    expect(aider[0]!.outcome).toMatchObject({ model: first.model, llm_requests: first.llm_requests });
    const shown = JSON.parse((await drydock("sessions", "show", id, "--json")).stdout) as {
      cost: { llm_requests: number; refused: number };
    };
    expect(shown.cost.llm_requests).toBe(1);
    expect(shown.cost.refused).toBeGreaterThan(0);

    const text = readFileSync(join(state, "audit", `${id}.jsonl`), "utf8");
    expect(text).not.toContain(KEY);
    expect(
      entries.find((e) => e.tool === "bash" && String(e.args.command).includes("/dev/null"))?.args.command,
    ).toBe("echo [redacted] > /dev/null");
  });

  it("applies a session's changes as a branch, logged as a person's apply", async () => {
    const applied = await drydock("sessions", "apply", id, "--branch", "review/verbs");
    expect(applied.code, applied.stderr).toBe(0);
    expect(applied.stdout).toMatch(/committed \d file\(s\) on branch review\/verbs/);
    expect(git(repo.path, "show", "review/verbs:notes/plan.md")).toBe("step one\n");
    expect(readFileSync(join(repo.path, "README.md"), "utf8")).toBe("hello\n");
    const again = await drydock("sessions", "apply", id, "--branch", "review/verbs");
    expect(again.code).toBe(1);
    expect(again.stderr).toMatch(/already exists/);
    const applies = (await logEntries()).filter((e) => e.tool === "apply");
    expect(applies.map((e) => [e.actor, e.outcome.ok])).toEqual([
      ["person", true],
      ["person", false],
    ]);
    const changed = git(repo.path, "diff", "--name-only", "main", "review/verbs").trim().split("\n");
    expect(changed).toContain("notes/plan.md");
    expect(applies[0]!.outcome).toMatchObject({ branch: "review/verbs", files: changed.length });
  });

  it("says how to find ids when one matches no session", async () => {
    const r = await drydock("sessions", "log", "ffffffffffff");
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/no session ffffffffffff .*`drydock sessions list`/);
    const bad = await drydock("sessions", "diff", "not-an-id");
    expect(bad.stderr).toMatch(/is not a session id .*`drydock sessions list`/);
  });

  it("follows the log as calls happen, until the session ends; its log outlives its box", async () => {
    const other = ok(await client.callTool({ name: "session_create", arguments: {} })).session_id as string;
    const follower = spawn(process.execPath, [cli, "sessions", "log", other, "--follow"], { env: env() });
    let out = "";
    follower.stdout.on("data", (d: Buffer) => (out += d.toString()));
    const exited = new Promise<number | null>((resolve) => follower.on("exit", resolve));
    try {
      await waitFor(() => out.includes("session_start"), "the log so far");
      await client.callTool({
        name: "bash",
        arguments: { session_id: other, command: "echo followed-live" },
      });
      await waitFor(() => out.includes("echo followed-live → exit 0"), "the new call");
      await client.callTool({
        name: "bash",
        arguments: { session_id: other, command: "echo kept-change > kept.txt" },
      });
      await client.callTool({ name: "session_destroy", arguments: { session_id: other } });
      expect(await exited).toBe(0);
    } finally {
      follower.kill("SIGINT");
    }
    expect(out).toMatch(/drydock\s+session_end/);

    const log = await drydock("sessions", "log", other);
    expect(log.stdout).toContain("echo followed-live");
    // The box is gone; the diff kept when the session ended is what `sessions diff` prints.
    const diff = await drydock("sessions", "diff", other);
    expect(diff.code, diff.stderr).toBe(0);
    expect(diff.stderr).toMatch(/has ended and its box is gone: this is its last diff, kept when it ended/);
    expect(diff.stdout).toMatch(/^\+kept-change$/m);
    const shown = await drydock("sessions", "show", other);
    expect(shown.stdout).toMatch(/box\s+gone/);
  });

  it("gives a person a shell of their own in the box, whose commands the log marks as theirs", async () => {
    // The agent can write the box user's ~/.bashrc; the person's shell must not run it.
    await call("bash", { command: "echo 'echo AGENT-RC-RAN' >> ~/.bashrc" });
    // A real terminal for the person: util-linux's script(1) runs the command on a new pty.
    const command = [process.execPath, cli, "sessions", "shell", id.slice(0, 8)]
      .map((a) => `'${a}'`)
      .join(" ");
    const child = spawn("script", ["-qfec", `stty cols 120 rows 30; exec ${command}`, "/dev/null"], {
      env: { ...env(), TERM: "xterm", OPENAI_API_KEY: KEY },
      stdio: ["pipe", "pipe", "pipe"],
    });
    const term = {
      write: (text: string) => child.stdin.write(text),
      kill: () => child.kill("SIGKILL"),
    };
    let screen = "";
    child.stdout.on("data", (d: Buffer) => (screen += d.toString()));
    child.stderr.on("data", (d: Buffer) => (screen += d.toString()));
    const exited = new Promise<number | null>((resolve) => child.on("close", (code) => resolve(code)));
    try {
      await waitFor(() => screen.includes("(drydock person) /workspace"), "the person's prompt");
      term.write("echo person-was-here-$((6*7))\r");
      await waitFor(() => screen.includes("person-was-here-42"), "the command's output");
      // A host key typed by the person is redacted in the log, as the server redacts it.
      term.write(`: ${KEY}\r`);
      await waitFor(
        () => (screen.match(/\(drydock person\) \/workspace/g) ?? []).length >= 3,
        "the prompt after it",
      );
      // A marker the agent planted in a file cannot pass for the person's command.
      term.write("printf '\\033]7337;0000000000000000;0;ZXZpbA==\\007' ; false\r");
      await waitFor(
        () => (screen.match(/\(drydock person\) \/workspace/g) ?? []).length >= 4,
        "the next prompt",
      );
      term.write("exit 0\r");
    } catch (error) {
      term.kill();
      throw new Error(`${(error as Error).message}; the terminal showed:\n${screen}`);
    }
    expect(await exited).toBe(0);
    expect(screen).not.toContain("AGENT-RC-RAN");
    // The shell's own reports are taken out of what the person sees; the forged one is shown as printed.
    expect(screen.match(/\x1b\]7337;[^\x07]*\x07/g)).toEqual(["\x1b]7337;0000000000000000;0;ZXZpbA==\x07"]);

    const person = (await logEntries()).filter((e) => e.actor === "person" && e.tool.startsWith("person_"));
    expect(person.map((e) => [e.tool, e.args.command ?? e.args.event])).toEqual([
      ["person_shell", "start"],
      ["person_command", "echo person-was-here-$((6*7))"],
      ["person_command", ": [redacted]"],
      ["person_command", "printf '\\033]7337;0000000000000000;0;ZXZpbA==\\007' ; false"],
      ["person_command", "exit 0"],
      ["person_shell", "end"],
    ]);
    // The status is what the shell in the box reported, and says so.
    expect(person[1]!.outcome).toEqual({ ok: true, box_reported_exit_code: 0 });
    expect(person[3]!.outcome).toEqual({ ok: false, box_reported_exit_code: 1 });
    expect(JSON.stringify(person)).not.toContain('"evil"');

    // The agent's own shell never saw any of it.
    const agent = await call("bash", { command: 'echo "[$DRYDOCK_ACTOR]"; history | wc -l' });
    expect(agent.stdout).toContain("[]");
  });
});

async function waitFor(
  check: () => boolean | Promise<boolean>,
  what: string,
  timeoutMs = 60_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe("drydock sessions verbs after the server stopped, on a kept box", () => {
  it("reads the log, diffs, shows and applies a session kept with --keep-sessions", async () => {
    using repo = tempRepo();
    const state = mkdtempSync(join(tmpdir(), "drydock-state-"));
    const env = { ...process.env, DRYDOCK_STATE_DIR: state } as Record<string, string>;
    const run = async (...args: string[]) => {
      try {
        const { stdout, stderr } = await promisify(execFile)(process.execPath, [cli, ...args], { env });
        return { code: 0, stdout, stderr };
      } catch (error) {
        const e = error as { code: number; stdout: string; stderr: string };
        return { code: e.code, stdout: e.stdout, stderr: e.stderr };
      }
    };
    let id = "";
    try {
      const client = new Client({ name: "kept", version: "1" });
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
            "--keep-sessions",
          ],
          env,
          stderr: "ignore",
        }),
      );
      id = ok(await client.callTool({ name: "session_create", arguments: {} })).session_id as string;
      ok(
        await client.callTool({
          name: "bash",
          arguments: { session_id: id, command: "echo kept > kept.txt" },
        }),
      );
      await client.close();
      // The server is gone once its owner label names a dead process.
      await waitFor(
        async () => (await run("sessions", "list", "--json")).stdout.includes('"alive": false'),
        "the server to stop",
      );

      const log = await run("sessions", "log", id);
      expect(log.stdout).toMatch(/agent\s+bash\s+echo kept > kept.txt → exit 0/);
      expect(log.stdout).toMatch(/drydock\s+session_kept/);
      expect((await run("sessions", "diff", id)).stdout).toContain("+kept");
      const shown = JSON.parse((await run("sessions", "show", id, "--json")).stdout) as {
        owner_alive: boolean;
      };
      expect(shown.owner_alive).toBe(false);
      const applied = await run("sessions", "apply", id);
      expect(applied.code, applied.stderr).toBe(0);
      expect(git(repo.path, "show", `drydock/${id}:kept.txt`)).toBe("kept\n");
    } finally {
      if (id) await run("sessions", "rm", id);
      rmSync(state, { recursive: true, force: true });
    }
  });
});
