/**
 * Boxes under runc and under runsc (gVisor), side by side. The same session works under both: the
 * shell (stdout and stderr apart, on terminals of the box), copy-in, the file tools, git_diff and
 * aider with the offline model through the gateway's socket. What differs is the kernel that
 * answers the box: under runc the host's, under runsc gVisor's, and the tests show where a box sees
 * the difference (the host kernel's identity and boot line, the host's paths, the kernel log, and
 * system calls that reach the host's kernel under runc and are not there under gVisor).
 */
import { execFile } from "node:child_process";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { serverExtensions } from "../../src/server/extensions.js";
import { runscHostPids } from "../../src/sandbox/box-profile.js";
import type { BoxRuntime } from "../../src/sandbox/box-runtime.js";
import { inMemoryDrydock, ok, type InMemoryDrydock } from "../helpers/mcp-client.js";
import { tempRepo, type TempRepo } from "../helpers/repos.js";
import { testEngine } from "../helpers/sessions.js";

const cli = join(process.cwd(), "dist", "cli", "main.js");
const run = promisify(execFile);

/** Probes of the kernel under the box, printed as `name: result` lines. */
const KERNEL_PROBE = `python3 - <<'EOF'
import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)
buf = ctypes.create_string_buffer(512)
def call(name, nr, *args):
    ctypes.set_errno(0)
    r = libc.syscall(nr, *args)
    print(f"{name}: {'ok' if r >= 0 else os.strerror(ctypes.get_errno())}")
call("io_uring_setup", 425, 8, buf)
call("memfd_secret", 447, 0)
call("pidfd_open", 434, os.getpid(), 0)
call("open_tree", 428, -100, b"/", 0)
call("userfaultfd", 323, 0)
print("version:", open("/proc/version").read().strip())
print("cmdline:", open("/proc/cmdline").read().strip())
print("host paths:", "/var/lib/docker" in open("/proc/self/mountinfo").read())
print("kallsyms:", os.path.exists("/proc/kallsyms"))
EOF
dmesg 2>&1 | head -n 1 | sed 's/^/dmesg: /'`;

function lines(text: string): Record<string, string> {
  return Object.fromEntries(
    text
      .trim()
      .split("\n")
      .map((line) => [line.slice(0, line.indexOf(":")), line.slice(line.indexOf(":") + 2)]),
  );
}

describe.each(["runc", "runsc"] as BoxRuntime[])("a session under %s", (runtime) => {
  let repo: TempRepo;
  let drydock: InMemoryDrydock;
  let sessionId: string;
  const call = async (name: string, args: Record<string, unknown>) =>
    ok(
      await drydock.client.callTool({ name, arguments: { ...args, session_id: sessionId } }, undefined, {
        timeout: 170_000,
      }),
    );

  beforeAll(async () => {
    repo = tempRepo({ "README.md": "hello\n", "src/app.py": "print('app')\n" });
    drydock = await inMemoryDrydock({
      repo: repo.path,
      sessionOptions: { runtime },
      ...(await serverExtensions({ llm: "offline" })),
    });
    sessionId = ok(await drydock.client.callTool({ name: "session_create", arguments: {} }))
      .session_id as string;
  });

  afterAll(async () => {
    await drydock?.[Symbol.asyncDispose]();
    repo?.[Symbol.dispose]();
  });

  it("is made under that runtime, with every default of the hardened profile", async () => {
    const engine = await testEngine();
    const [box] = await engine.listBoxes("drydock.session", sessionId);
    const info = await engine.inspect(box!.id);
    expect(info.HostConfig.Runtime).toBe(runtime);
    expect(info.HostConfig).toMatchObject({
      NetworkMode: "none",
      ReadonlyRootfs: true,
      CapDrop: ["ALL"],
      SecurityOpt: ["no-new-privileges:true"],
      Memory: 2048 * 1024 * 1024,
    });
    expect(info.Config.User).toBe("1000");
    expect(info.HostConfig.PidsLimit).toBe(runtime === "runsc" ? runscHostPids(256) : 256);
  });

  it("runs the shell on terminals of the box, with stdout and stderr apart, and ls works", async () => {
    const reply = await call("bash", {
      command:
        "ls -l README.md | cut -d' ' -f1,3; stat -c %U src/app.py; tty <&1; tty <&2 >&2; exit_with() { return $1; }; exit_with 4",
    });
    const out = /^-rw-r--r-- agent\nagent\n(\/dev\/pts\/\d+)\n$/.exec(reply.stdout as string);
    const err = /^(\/dev\/pts\/\d+)\n$/.exec(reply.stderr as string);
    expect(out, JSON.stringify(reply)).not.toBeNull();
    expect(err, JSON.stringify(reply)).not.toBeNull();
    expect(out![1]).not.toBe(err![1]);
    expect(reply.exit_code).toBe(4);
    // State carries over between commands, and a long line reaches the shell whole.
    await call("bash", { command: `cd src && export LONG=${"x".repeat(5000)}` });
    expect(await call("bash", { command: "pwd; echo ${#LONG}" })).toMatchObject({
      stdout: "/workspace/src\n5000\n",
    });
  });

  it("edits files with the file tools and shows the change in git_diff", async () => {
    await call("str_replace_based_edit_tool", {
      command: "str_replace",
      path: "README.md",
      old_str: "hello",
      new_str: `hello from ${runtime}`,
    });
    await call("str_replace_based_edit_tool", { command: "create", path: "notes.txt", file_text: "new\n" });
    const view = await call("str_replace_based_edit_tool", { command: "view", path: "README.md" });
    expect(JSON.stringify(view)).toContain(`hello from ${runtime}`);
    const diff = await call("git_diff", {});
    expect(diff.diff).toContain(`+hello from ${runtime}`);
    expect(diff.diff).toContain("+++ b/notes.txt");
  });

  it("runs aider with the offline model through the gateway's socket", async () => {
    const reply = await call("aider_ai_code", {
      ai_coding_prompt: "no rule matches this prompt",
      relative_editable_files: ["README.md"],
      model: "openai/drydock-offline",
    });
    expect(reply).toHaveProperty("success");
    const models = await call("bash", {
      command:
        "python3 -c \"import urllib.request; print(urllib.request.urlopen('http://127.0.0.1:47011/offline/v1/models', timeout=10).status)\"",
    });
    expect(models.stdout).toBe("200\n");
  });

  it("shows the kernel that answers it: the host's under runc, gVisor's under runsc", async () => {
    const seen = lines((await call("bash", { command: KERNEL_PROBE })).stdout as string);
    const host = await run("uname", ["-r"]);
    if (runtime === "runc") {
      // The host's kernel, its boot line and its paths are in view, and system calls Docker's
      // seccomp profile lets through reach it: io_uring, memfd_secret and pidfd_open answer.
      expect(seen.version).toContain(host.stdout.trim());
      expect(seen.cmdline).not.toMatch(/gvisor/);
      expect(seen["host paths"]).toBe("True");
      expect(seen.dmesg).toMatch(/Operation not permitted/);
      expect(seen).toMatchObject({ io_uring_setup: "ok", memfd_secret: "ok", pidfd_open: "ok" });
      expect(seen.open_tree).toBe("Operation not permitted");
    } else {
      // gVisor's kernel answers: a made-up identity and log, no host path, and the newer system
      // calls are not implemented at all; io_uring is gVisor's own, not the host's.
      expect(seen.version).toBe("Linux version 4.4.0 #1 SMP Sun Jan 10 15:06:54 PST 2016");
      expect(seen.version).not.toContain(host.stdout.trim());
      expect(seen.cmdline).toMatch(/gvisor/);
      expect(seen["host paths"]).toBe("False");
      expect(seen.kallsyms).toBe("False");
      expect(seen.dmesg).toMatch(/Starting gVisor/);
      expect(seen).toMatchObject({
        memfd_secret: "Function not implemented",
        pidfd_open: "Function not implemented",
        open_tree: "Function not implemented",
        userfaultfd: "Function not implemented",
      });
    }
  });
});

describe("--runtime on the command line", () => {
  let repo: TempRepo;
  beforeAll(() => {
    repo = tempRepo({ "README.md": "hello\n" });
  });
  afterAll(() => repo?.[Symbol.dispose]());

  const drydock = (args: string[], env: NodeJS.ProcessEnv = {}) =>
    run("node", [cli, ...args], { cwd: repo.path, env: { ...process.env, ...env } }).then(
      (r) => ({ code: 0, ...r }),
      (e: { code: number; stdout: string; stderr: string }) => e,
    );

  it("runs a command in a box under runsc, and DRYDOCK_RUNTIME sets the default", async () => {
    const flag = await drydock(["run", "--runtime", "runsc", "--no-diff", "--", "uname -r; ls -l README.md"]);
    expect(flag.stdout).toMatch(/^4\.4\.0\n-rw-r--r-- 1 agent agent 6 /m);
    const env = await drydock(["run", "--no-diff", "--", "uname -r"], { DRYDOCK_RUNTIME: "runsc" });
    expect(env.stdout).toMatch(/^4\.4\.0$/m);
    const runc = await drydock(["run", "--no-diff", "--", "uname -r"], { DRYDOCK_RUNTIME: "" });
    expect(runc.stdout).not.toMatch(/^4\.4\.0$/m);
    expect(runc.stdout).toMatch(/^\d+\.\d+/);
  });

  it("gives a runsc box with --egress the host's proxy through the socket, which refuses a host not listed", async () => {
    // No outside traffic: the proxy answers 403 for a host not on the list, without dialling it.
    const r = await drydock([
      "run",
      "--runtime",
      "runsc",
      "--egress",
      "pypi",
      "--no-diff",
      "--",
      'uname -r; curl -sS -o /dev/null -w "%{http_connect}\\n" https://example.com 2>/dev/null',
    ]);
    expect(r.stdout).toMatch(/^4\.4\.0$/m);
    expect(r.stdout).toMatch(/^403$/m);
    expect(r.stderr).toMatch(/egress refused example\.com:443/);
  });

  it("refuses a runtime that is not one, and a Docker network under runsc, with exit 2", async () => {
    const bad = await drydock(["run", "--runtime", "kata", "--", "true"]);
    expect(bad).toMatchObject({ code: 2 });
    expect(bad.stderr).toMatch(/--runtime: "kata" is not a runtime; use one of runc, runsc, auto/);
    const env = await drydock(["serve", "--http", "--port", "0"], { DRYDOCK_RUNTIME: "gvisor" });
    expect(env).toMatchObject({ code: 2 });
    expect(env.stderr).toMatch(/DRYDOCK_RUNTIME: "gvisor" is not a runtime/);
    const network = await drydock(["run", "--runtime", "runsc", "--network", "bridge", "--", "true"]);
    expect(network).toMatchObject({ code: 2 });
    expect(network.stderr).toMatch(/--network: a Docker network \("bridge"\) works under runtime runc only/);
  });

  it("doctor names the engine's runtimes and the one boxes get", async () => {
    const auto = await drydock(["doctor", "--json"], { DRYDOCK_RUNTIME: "auto" });
    const check = (JSON.parse(auto.stdout) as Array<{ name: string; ok: boolean; detail: string }>).find(
      (c) => c.name === "runtimes",
    );
    expect(check).toMatchObject({ ok: true });
    expect(check!.detail).toMatch(/^runc\b.*, runsc; boxes get runsc \(DRYDOCK_RUNTIME=auto\)/);
  });
});
