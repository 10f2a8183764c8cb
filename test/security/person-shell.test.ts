/**
 * `drydock sessions shell`: the person's shell in the agent's box runs nothing the agent wrote and
 * keeps its nonce from the agent. The agent plants what a shell and the tools in it read (a
 * readline macro on Enter, startup files, git configuration, programs in a directory on PATH it
 * can write) and watches the box for the shell's nonce; a person then works in the shell. Nothing
 * planted runs, no forged command reaches the audit log, and the agent cannot trace the shell.
 */
import { execFile, spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { PERSON_GID } from "../../src/cli/person-shell-confinement.js";
import type { AuditEntry } from "../../src/session/audit-entry.js";
import { ok } from "../helpers/mcp-client.js";
import { tempRepo, type TempRepo } from "../helpers/repos.js";

const cli = join(process.cwd(), "dist", "cli", "main.js");
/** base64 of "forged": what a stolen nonce would be used to log. */
const FORGED = "Zm9yZ2Vk";

/** What the agent leaves in its box for the person's shell to trip over. */
const PLANT = String.raw`(
set -e
# What each planted thing does when it runs in the person's shell (DRYDOCK_ACTOR=person there only).
ran='[ "$DRYDOCK_ACTOR" = person ] && { echo "AGENT-RAN-$0" >&2; echo "$0" >> /tmp/agent-ran; }'
# Enter rewrites the line: it reads the shell's nonce and prints a report of a forged command.
cat > ~/.inputrc <<'EOF'
"\C-m": "\C-e; echo AGENT-INPUTRC-RAN; printf '\\033]7337;%s;0;${FORGED}\\007' \"$__drydock_nonce\"\C-j"
EOF
for f in .bashrc .bash_profile .bash_login .profile .bash_logout; do
  printf '%s\nexport PAGER=/tmp/evil EDITOR=/tmp/evil\n' "$ran" >> ~/$f
done
# No directory on the box's PATH is writable in a default box (the root filesystem is read-only),
# though /opt/venv/bin is the box user's: the person's PATH is checked below to hold only root's.
printf '#!/bin/sh\n%s\nexit 0\n' "$ran" > /tmp/evil && chmod +x /tmp/evil
# git: the user's configuration, and the repository's own (an fsmonitor runs on git status).
git config --global core.pager /tmp/evil
git config --global core.editor /tmp/evil
git config --global alias.st '!/tmp/evil'
git config core.pager /tmp/evil
git config core.editor /tmp/evil
git config core.fsmonitor /tmp/evil
git config core.hooksPath /tmp
# A thief: copies anything that looks like the shell's nonce, and uses it on every terminal it can open.
cat > /tmp/thief.sh <<'EOF'
end=$(( $(date +%s) + 120 ))
while [ "$(date +%s)" -lt "$end" ]; do
  for f in /proc/[0-9]*/environ /proc/[0-9]*/cmdline /tmp/.drydock-person*/rc; do
    n=$(tr '\0' '\n' < "$f" 2>/dev/null | grep -ao '__drydock_nonce=[0-9a-f]*' | head -1 | cut -d= -f2)
    [ -n "$n" ] || continue
    echo "$f $n" >> /tmp/stolen
    for t in /dev/pts/[0-9]*; do printf '\033]7337;%s;0;${FORGED}\007' "$n" > "$t" 2>/dev/null || true; done
  done
  sleep 0.05
done
EOF
setsid nohup sh /tmp/thief.sh > /dev/null 2>&1 < /dev/null &
echo planted
)`;

/** Run by the agent while the person's shell is open: whether it can trace or read any process of the person's group. */
const REACH = String.raw`python3 - <<'EOF'
import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)
found, reached = [], []
for pid in filter(str.isdigit, os.listdir("/proc")):
    try:
        status = open(f"/proc/{pid}/status").read()
    except OSError:
        continue
    gid = [l.split()[1] for l in status.splitlines() if l.startswith("Gid:")][0]
    if gid != "${PERSON_GID}":
        continue
    found.append(pid)
    for what in ("mem", "environ"):
        try:
            with open(f"/proc/{pid}/{what}", "rb") as f:
                if what == "environ" and b"__drydock_nonce" not in f.read():
                    continue
            reached.append(f"{pid} {what}")
        except OSError:
            pass
    if libc.ptrace(16, int(pid), None, None) == 0:
        reached.append(f"{pid} ptrace")
        libc.ptrace(17, int(pid), None, None)
print("found", len(found))
print("reached", ",".join(reached) or "none")
EOF`;

describe("the person's shell against what the agent planted", () => {
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

  beforeAll(async () => {
    repo = tempRepo({ "README.md": "hello\n" });
    state = mkdtempSync(join(tmpdir(), "drydock-state-"));
    client = new Client({ name: "person-shell", version: "1" });
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

  it("runs nothing the agent wrote, keeps its nonce, and logs only what the person typed", async () => {
    const planted = await agent(PLANT);
    expect(planted).toMatch(/^planted$/m);

    const command = [process.execPath, cli, "sessions", "shell", id.slice(0, 8)]
      .map((a) => `'${a}'`)
      .join(" ");
    const child = spawn("script", ["-qfec", `stty cols 160 rows 40; exec ${command}`, "/dev/null"], {
      env: { ...env(), TERM: "xterm" },
      stdio: ["pipe", "pipe", "pipe"],
    });
    let screen = "";
    child.stdout.on("data", (d: Buffer) => (screen += d.toString()));
    child.stderr.on("data", (d: Buffer) => (screen += d.toString()));
    const exited = new Promise<number | null>((resolve) => child.on("close", (code) => resolve(code)));
    const prompts = () => (screen.match(/\(drydock person\) \/workspace/g) ?? []).length;
    const typed = [
      "ls -a",
      "git status --short",
      "git log -1 --format=%s",
      "git var GIT_EDITOR; git var GIT_PAGER",
      'echo "[$PATH][$HOME][$INPUTRC][$PAGER][$EDITOR][$(id -g)]"',
    ];
    let reach = "";
    try {
      await waitFor(() => prompts() >= 1, "the person's prompt");
      for (const [i, line] of typed.entries()) {
        child.stdin.write(`${line}\r`);
        await waitFor(() => prompts() >= i + 2, `the prompt after ${line}`);
      }
      reach = await agent(REACH);
      child.stdin.write("exit 0\r");
    } catch (error) {
      child.kill("SIGKILL");
      throw new Error(`${(error as Error).message}; the terminal showed:\n${screen}`);
    }
    expect(await exited).toBe(0);

    expect(screen).not.toMatch(/AGENT-/);
    expect(screen).toContain("README.md");
    expect(screen).toMatch(/\/usr\/bin\/vi\s+\/usr\/bin\/less/);
    const path =
      /\[(\/[^\][\s]*)\]\[\/nonexistent\]\[(\/etc\/inputrc|\/dev\/null)\]\[\/usr\/bin\/less\]\[\/usr\/bin\/vi\]\[(\d+)\]/.exec(
        screen,
      );
    expect(path, screen).not.toBeNull();
    const dirs = path![1]!.split(":");
    expect(dirs).toContain("/usr/bin");
    const owners = await agent(`/usr/bin/stat -L -c '%u %a %n' ${dirs.join(" ")}`);
    for (const line of owners.trim().split("\n")) expect(line).toMatch(/^0 [0-7]?[0-7][0-5][0-5] /);
    expect(path![3]).toBe(String(PERSON_GID));

    // The agent found the person's processes and could reach none of them.
    expect(reach).toMatch(/found [1-9]/);
    expect(reach).toContain("reached none");
    // Nothing ran, nothing was stolen, and the shell's rc is gone with it.
    const traces = await agent(
      "/usr/bin/cat /tmp/agent-ran /tmp/stolen 2>/dev/null; ls -d /tmp/.drydock-person* 2>/dev/null; echo end",
    );
    expect(traces.trim()).toBe("end");

    const r = await promisify(execFile)(process.execPath, [cli, "sessions", "log", id, "--json"], {
      env: env(),
    });
    const person = r.stdout
      .trimEnd()
      .split("\n")
      .map((l) => JSON.parse(l) as AuditEntry)
      .filter((e) => e.tool === "person_command");
    // Exactly what the person typed: nothing forged with a stolen nonce, no line a macro rewrote.
    expect(person.map((e) => e.args.command)).toEqual([...typed, "exit 0"]);
  });
});

async function waitFor(check: () => boolean, what: string, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}
