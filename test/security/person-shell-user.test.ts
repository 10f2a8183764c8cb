/**
 * `drydock sessions shell`: a person is a different user from the agent. The agent points every
 * git setting that runs a program at a program of its own (the repository's `.git/config`, a file
 * it includes, attributes on every path), and watches every terminal it can find to draw a fake
 * prompt and read what is typed; the person then works in the shell with git, and runs a program
 * that knows the report format and the shell's nonce. Nothing of the agent's runs, the agent
 * cannot open the person's terminal, and the log holds exactly what the person typed.
 */
import { execFile, spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { PERSON_GID, PERSON_UID } from "../../src/cli/person-shell-confinement.js";
import type { AuditEntry } from "../../src/session/audit-entry.js";
import { ok } from "../helpers/mcp-client.js";
import { tempRepo, type TempRepo } from "../helpers/repos.js";

const cli = join(process.cwd(), "dist", "cli", "main.js");
const fixture = (name: string) => readFileSync(join(__dirname, "fixtures", "person-shell", name));

describe("the person's shell is another user than the agent", () => {
  let repo: TempRepo;
  let state: string;
  let client: Client;
  let id: string;

  const env = () => ({ ...process.env, DRYDOCK_STATE_DIR: state }) as Record<string, string>;
  const call = async (name: string, args: Record<string, unknown>) =>
    ok(await client.callTool({ name, arguments: { session_id: id, ...args } }));
  const agent = async (command: string) => {
    const r = await call("bash", { command, timeout_s: 60 });
    return String(r.stdout) + String(r.stderr);
  };
  /** Puts a fixture in the box's /tmp, as the agent. */
  const put = (name: string) =>
    agent(
      `printf %s ${fixture(name).toString("base64")} | base64 -d > /tmp/${name} && chmod +x /tmp/${name}`,
    );

  beforeAll(async () => {
    repo = tempRepo({ "README.md": "hello\n" });
    state = mkdtempSync(join(tmpdir(), "drydock-state-"));
    client = new Client({ name: "person-shell-user", version: "1" });
    await client.connect(
      new StdioClientTransport({
        command: process.execPath,
        args: [cli, "serve", "--repo", repo.path, "--image", inject("sandboxImage"), "--pool", "0"],
        env: env(),
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

  /** What the person saw (without colours and carriage returns), what the agent's spy found, and the log. */
  let screen = "";
  let spied = "";
  let lines: AuditEntry[] = [];
  /** Lines the person typed that brought no prompt back. */
  const lost: string[] = [];
  const typed = [
    "id -u; id -g",
    "git status --short",
    "git diff",
    "git diff --stat HEAD",
    "git log -p -1 --format=%s",
    "git show HEAD:README.md",
    "git lg -1",
    "git st",
    "git fetch origin 2>&1 | tail -1",
    "git config --list --show-origin",
    "cat README.md",
    "touch /workspace/person-was-here",
    "sh /tmp/forge.sh",
    "echo typed-secret-$((6*7))",
  ];

  beforeAll(async () => {
    for (const name of ["evil.sh", "plant-git.sh", "forge.sh", "pts-spy.py"]) await put(name);
    expect(await agent("sh /tmp/plant-git.sh")).toMatch(/^planted$/m);
    await agent("setsid nohup python3 /tmp/pts-spy.py 90 > /tmp/spy.log 2>&1 < /dev/null & echo spying");
    const shell = openShell(id, env());
    try {
      await shell.prompt(1);
      // The spy looks at the terminals every 50 ms: give it time to find the person's.
      await new Promise((r) => setTimeout(r, 1500));
      for (const line of typed) {
        const before = shell.prompts();
        shell.type(`${line}\r`);
        // A line that brings no prompt back was lost (read by someone else): noted, not fatal,
        // so that each promise below fails for its own reason.
        if (!(await shell.until(() => shell.prompts() > before, 20_000))) lost.push(line);
      }
      spied = await agent("cat /tmp/pts-report; echo ---; cat /tmp/keys 2>/dev/null; echo; echo ---");
      shell.type("exit 0\r");
      if (!(await shell.until(() => shell.done(), 20_000))) shell.kill();
    } catch (error) {
      shell.kill();
      throw new Error(`${(error as Error).message}; the terminal showed:\n${shell.screen()}`);
    }
    await shell.exited;
    screen = shell
      .screen()
      .replace(/\x1b\[[0-9;?]*[A-Za-z]|\x1b[=>]/g, "")
      .replace(/\r/g, "");
    lines = await personCommands(id, env());
  });

  it("runs under a uid and group of its own, and reads the agent's files but writes none", () => {
    expect(screen).toMatch(new RegExp(`^${PERSON_UID}\\n${PERSON_GID}$`, "m"));
    expect(screen).toContain("hello\nchanged by the agent\n");
    expect(screen).toMatch(/touch: cannot touch '\/workspace\/person-was-here': Permission denied/);
    expect(screen).toContain("typed-secret-42");
  });

  it("runs no program the agent's git configuration names, and git still works on the agent's repository", async () => {
    expect(screen).toMatch(/^ M README\.md$/m);
    expect(screen).toContain("+changed by the agent");
    // git's config, as the person's git reads it: nothing that names a program, but the overrides.
    const listed = screen.slice(
      screen.indexOf("git config --list --show-origin"),
      screen.indexOf("$ cat README.md"),
    );
    expect(listed).toMatch(/core\.hookspath=\/dev\/null/i);
    expect(listed).not.toMatch(
      /evil|filter\.|diff\.external|textconv|diff\.evil|alias\.|include|pager|sshcommand|askpass|credential|gpg\.program|fsmonitor=\/|hookspath=\/tmp/i,
    );
    // Nothing of the agent's ran: no trace, and the person was told which settings were left out.
    expect(screen).not.toContain("AGENT-RAN");
    expect(screen).toMatch(/settings of the agent's left out of this shell's git: .*filter\.evil\.clean/);
    expect(await agent("cat /tmp/agent-ran 2>/dev/null; echo end")).toBe("end\n");
  });

  it("has a terminal the agent's uid cannot open, to draw on or to read", () => {
    const [report = "", keys = ""] = spied.split("---\n");
    const theirs = report
      .trim()
      .split("\n")
      .filter((l) => l.includes(`uid=${PERSON_UID} `));
    expect(theirs.length, spied).toBeGreaterThanOrEqual(1);
    for (const line of theirs) {
      expect(line).toMatch(/mode=0o6[02]0 /);
      expect(line).not.toContain("OPENED");
      expect(line).toMatch(/rw:13 w:13 r:13/);
    }
    expect(report).not.toContain("OPENED");
    expect(screen).not.toContain("FAKE-PROMPT");
    expect(lost).toEqual([]);
    expect(keys).not.toContain("typed-secret");
  });

  it("logs what the person typed, and no report a program printed, even with the nonce", () => {
    expect(screen).toContain("forge: nonce known");
    expect(lines.map((e) => e.args.command)).toEqual([...typed, "exit 0"]);
    expect(JSON.stringify(lines)).not.toMatch(/forged|rm -rf/);
    for (const e of lines) {
      expect(e.outcome).not.toHaveProperty("exit_code");
      expect(e.outcome).toHaveProperty("box_reported_exit_code");
    }
    expect(lines[0]!.outcome.box_reported_exit_code).toBe(0);
    expect(lines.find((e) => e.args.command === "touch /workspace/person-was-here")!.outcome).toMatchObject({
      ok: false,
      box_reported_exit_code: 1,
    });
  });

  it("does not follow a .git/config the agent made a link, nor wait on one it made a pipe: git is then not set up", async () => {
    for (const [make, why] of [
      ["ln -sf /tmp/included .git/config", /config was not used \(it could not be read\)/],
      ["rm -f .git/config && mkfifo .git/config && (sleep 120 > .git/config &)", /config was not used/],
    ] as const) {
      await agent(`cd /workspace && ${make} && rm -f /tmp/agent-ran && echo made`);
      const shell = openShell(id, env());
      try {
        await shell.prompt(1);
        shell.type("git status; git log -1\r");
        await shell.prompt(2);
        shell.type("exit 0\r");
        await shell.exited;
      } catch (error) {
        shell.kill();
        throw new Error(`${(error as Error).message}; the terminal showed:\n${shell.screen()}`);
      }
      const seen = shell.screen().replace(/\r/g, "");
      expect(seen).toMatch(why);
      expect(seen).toContain("git is not set up in this shell");
      expect(seen).toMatch(/not a git repository/);
      expect(seen).not.toContain("AGENT-RAN");
      expect(await agent("cat /tmp/agent-ran 2>/dev/null; echo end")).toBe("end\n");
    }
  });
});

/** The person's shell on a terminal of the host's (`script`), driven by typing. */
function openShell(id: string, env: Record<string, string>) {
  const command = [process.execPath, cli, "sessions", "shell", id.slice(0, 8)].map((a) => `'${a}'`).join(" ");
  const child = spawn("script", ["-qfec", `stty cols 200 rows 50; exec ${command}`, "/dev/null"], {
    env: { ...env, TERM: "xterm" },
    stdio: ["pipe", "pipe", "pipe"],
  });
  let screen = "";
  child.stdout.on("data", (d: Buffer) => (screen += d.toString()));
  child.stderr.on("data", (d: Buffer) => (screen += d.toString()));
  let done = false;
  const exited = new Promise<number | null>((resolve) =>
    child.on("close", (code) => {
      done = true;
      resolve(code);
    }),
  );
  const prompts = () => (screen.match(/\(drydock person\) \/workspace \$/g) ?? []).length;
  return {
    exited,
    done: () => done,
    prompts,
    screen: () => screen,
    type: (text: string) => child.stdin.write(text),
    kill: () => child.kill("SIGKILL"),
    prompt: (n: number) => waitFor(() => prompts() >= n, `prompt ${n}`),
    until: (check: () => boolean, timeoutMs: number) =>
      waitFor(check, "", timeoutMs).then(
        () => true,
        () => false,
      ),
  };
}

async function personCommands(id: string, env: Record<string, string>): Promise<AuditEntry[]> {
  const r = await promisify(execFile)(process.execPath, [cli, "sessions", "log", id, "--json"], { env });
  return r.stdout
    .trimEnd()
    .split("\n")
    .filter(Boolean)
    .map((l) => JSON.parse(l) as AuditEntry)
    .filter((e) => e.tool === "person_command");
}

async function waitFor(check: () => boolean, what: string, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}
