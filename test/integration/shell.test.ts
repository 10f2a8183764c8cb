import { readFileSync, readdirSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { tempRepo } from "../helpers/repos.js";
import { testSession } from "../helpers/sessions.js";

describe("PtyShell in a real box", () => {
  it("keeps cwd and environment across commands and reports exact exit codes", async () => {
    using repo = tempRepo();
    await using session = await testSession(repo.path);
    expect((await session.bash("cd /tmp && export FOO=bar")).exitCode).toBe(0);
    const r = await session.bash('pwd; echo "$FOO"');
    expect(r.output).toBe("/tmp\nbar\n");
    expect((await session.bash("exit_code() { return $1; }; exit_code 42")).exitCode).toBe(42);
    expect((await session.bash("false")).exitCode).toBe(1);
    expect((await session.bash("(exit 255)")).exitCode).toBe(255);
  });

  it("tells programs a terminal 120 columns wide, so their padding stays short", async () => {
    using repo = tempRepo();
    await using session = await testSession(repo.path);
    const r = await session.bash(
      "python3 -c 'import os, sys; print(os.get_terminal_size(1).columns); print(os.get_terminal_size(2).columns, file=sys.stderr)'",
    );
    expect(r.stdout).toBe("120\n");
    expect(r.stderr).toBe("120\n");
  });

  it("is not fooled by a command that prints frame-like text or control characters", async () => {
    using repo = tempRepo();
    await using session = await testSession(repo.path);
    const r = await session.bash(
      String.raw`printf '\036DDE0000:0\036 __DRYDOCK_x__\n\003\034 done\n'; echo after`,
    );
    expect(r.exitCode).toBe(0);
    expect(r.output).toContain("after");
    expect(r.output).toContain("done");
    expect((await session.bash("echo still-alive")).output).toBe("still-alive\n");
  });

  it("gives a command reading stdin end-of-file instead of hanging", async () => {
    using repo = tempRepo();
    await using session = await testSession(repo.path);
    const r = await session.bash('read -r line; echo "read=$? line=[$line]"; cat; echo cat=$?', {
      timeoutMs: 10_000,
    });
    expect(r.timedOut).toBe(false);
    expect(r.output).toBe("read=1 line=[]\ncat=0\n");
  });

  it("interrupts a command past its limit, stops it, and gives the new shell the state from before it", async () => {
    using repo = tempRepo();
    await using session = await testSession(repo.path);
    await session.bash("cd /tmp && export KEEP=1");
    const r = await session.bash("export LOST=1; cd /; echo start; sleep 60", { timeoutMs: 1_000 });
    expect(r.timedOut).toBe(true);
    expect(r.exitCode).toBeNull();
    expect(r.restarted).toBe(true);
    expect(r.output).toContain("start");
    expect(r.note).toMatch(/timed out after 1 s and was stopped as a whole: 1 process got SIGINT;/);
    expect(r.note).toMatch(
      /with the working directory, variables, functions, aliases and options from before/,
    );
    expect((await session.bash('echo "$PWD $KEEP ${LOST-unset}"')).output).toBe("/tmp 1 unset\n");
  });

  it("stops a command cancelled as it is sent, and keeps the state from before it", async () => {
    using repo = tempRepo();
    await using session = await testSession(repo.path);
    await session.bash("cd /tmp && export KEEP=1");
    const cancelled = new AbortController();
    cancelled.abort();
    const r = await session.bash("cd /; sleep 30", { signal: cancelled.signal });
    expect(r).toMatchObject({ timedOut: false, exitCode: null, restarted: true });
    expect(r.note).toMatch(
      /^the command was cancelled and was stopped as a whole: .*from before the command$/,
    );
    expect((await session.bash('echo "$PWD $KEEP"')).output).toBe("/tmp 1\n");
  });

  it("kills a command that ignores SIGINT", async () => {
    using repo = tempRepo();
    await using session = await testSession(repo.path);
    const r = await session.bash("trap '' INT; sleep 60", { timeoutMs: 1_000 });
    expect(r.timedOut).toBe(true);
    expect(r.note).toMatch(
      /stopped as a whole: 1 process got SIGINT, 1 got SIGKILL \(subshells, and what ignored SIGINT or still ran after 1 s\)/,
    );
    expect((await session.bash("echo ok")).output).toBe("ok\n");
  });

  it("keeps the status a command ended the shell with, and the state from before the command", async () => {
    using repo = tempRepo();
    await using session = await testSession(repo.path);
    await session.bash("cd /tmp; f() { echo in-f; }");
    const r = await session.bash("false; cd /; exit 3");
    expect(r).toMatchObject({ exitCode: 3, restarted: true, timedOut: false });
    expect(r.note).toMatch(/the shell exited with status 3 during this command/);
    expect(r.note).toMatch(/from before the command/);
    expect(await session.bash("pwd; f")).toMatchObject({
      output: "/tmp\nin-f\n",
      exitCode: 0,
      restarted: false,
    });
    expect(await session.bash("kill -9 $$")).toMatchObject({ exitCode: 137, restarted: true });
    // Under set -e a failing command ends the shell, as bash does; set -e itself is kept.
    await session.bash("set -e");
    expect(await session.bash("echo fine")).toMatchObject({ output: "fine\n", restarted: false });
    const failed = await session.bash("echo before; false; echo not-reached");
    expect(failed).toMatchObject({ output: "before\n", exitCode: 1, restarted: true });
    expect(failed.note).toMatch(/a failure under set -e/);
    expect((await session.bash("echo $-; pwd")).output).toMatch(/^[a-zA-Z]*e[a-zA-Z]*\n\/tmp\n$/);
    expect((await session.bash("echo back")).output).toBe("back\n");
  });

  it("gives stdout and stderr apart, both on terminals, and both merged in output", async () => {
    using repo = tempRepo();
    await using session = await testSession(repo.path);
    const r = await session.bash("echo out; echo err >&2");
    expect(r).toMatchObject({ stdout: "out\n", stderr: "err\n", exitCode: 0 });
    expect(r.output.split("\n").sort()).toEqual(["", "err", "out"]);
    // Writes far enough apart keep their order in output.
    const spaced = await session.bash("echo one; sleep 0.3; echo two >&2; sleep 0.3; echo three");
    expect(spaced).toMatchObject({ output: "one\ntwo\nthree\n", stdout: "one\nthree\n", stderr: "two\n" });
    expect((await session.bash("test -t 1 && test -t 2 && echo both-tty")).stdout).toBe("both-tty\n");
    // A redirection inside the command is the command's: 2>&1 puts stderr in stdout, exactly in order.
    expect(await session.bash("{ echo a; echo b >&2; echo c; } 2>&1")).toMatchObject({
      stdout: "a\nb\nc\n",
      stderr: "",
    });
    const failing = await session.bash("ls /nope");
    expect(failing.exitCode).toBe(2);
    expect(failing.stdout).toBe("");
    expect(failing.stderr).toMatch(/^ls: cannot access '\/nope': No such file or directory\n$/);
  });

  it("keeps each stream's head and tail when it goes past the cap", async () => {
    using repo = tempRepo();
    await using session = await testSession(repo.path, { maxOutputBytes: 10_000 });
    const r = await session.bash(
      "echo OUT-FIRST; echo ERR-FIRST >&2; seq 1 20000; seq 1 20000 >&2; echo OUT-LAST; echo ERR-LAST >&2",
    );
    expect(r.truncated).toBe(true);
    for (const [text, first, last] of [
      [r.stdout, "OUT-FIRST", "OUT-LAST"],
      [r.stderr, "ERR-FIRST", "ERR-LAST"],
    ] as const) {
      expect(text.startsWith(`${first}\n1\n`)).toBe(true);
      expect(text.endsWith(`20000\n${last}\n`)).toBe(true);
      expect(text).toMatch(/bytes of output cut/);
      expect(text.length).toBeLessThan(10_500);
    }
    expect(r.output.length).toBeLessThan(10_500);
  });

  it("starts no new shell once it is closed, even for a command that was running", async () => {
    using repo = tempRepo();
    await using session = await testSession(repo.path);
    const running = session.bash("sleep 30");
    await new Promise((r) => setTimeout(r, 500));
    await session.shell.dispose();
    const closedAt = Date.now();
    await expect(running).rejects.toThrow(/shell of this session is closed/);
    expect(Date.now() - closedAt).toBeLessThan(5_000);
    await expect(session.bash("echo x")).rejects.toThrow(/shell of this session is closed/);
  });

  it("never types a command into a terminal the last one left cooked", async () => {
    using repo = tempRepo();
    await using session = await testSession(repo.path);
    for (let i = 0; i < 10; i++) {
      await session.bash("stty sane < /dev/tty");
      // In a cooked terminal ^U would erase the line typed so far and ^C interrupt the shell.
      const r = await session.bash("printf '%s|' 'a\x15b' 'c\x03d'; echo", { timeoutMs: 5_000 });
      expect(r, `round ${i}`).toMatchObject({ output: "ab|cd|\n", exitCode: 0, timedOut: false });
    }
  });

  it("resets the terminal after a command that started a process, and only then", async () => {
    using repo = tempRepo();
    await using session = await testSession(repo.path);
    // The kernel's last process id in the box (runc; gVisor does not tell it, and resets always).
    const lastPid = async () =>
      Number((await session.bash("read -r p < /proc/sys/kernel/ns_last_pid; echo $p")).output);
    // The session's start primes the box agent's tree writer in the background (git in the box):
    // wait until the box has started no process for a while before counting.
    let before = await lastPid();
    for (let i = 0; i < 40; i++) {
      await new Promise((r) => setTimeout(r, 500));
      const now = await lastPid();
      if (now === before) break;
      before = now;
    }
    await session.bash("true");
    await session.bash("cd /tmp; export X=1; cd /workspace");
    expect(await lastPid(), "builtins only: no process, not even the frame's stty").toBe(before);
    await session.bash("/bin/true");
    expect(await lastPid(), "the command's process, then the frame's stty").toBe(before + 2);
    // Left cooked by a command, the terminal is raw again for the next (^U and ^C typed verbatim).
    await session.bash("stty sane < /dev/tty; true");
    expect((await session.bash("printf '%s|' 'a\x15b' 'c\x03d'; echo")).output).toBe("ab|cd|\n");
  });

  it("caps a 100 MB output, keeps head and tail, and the shell still works", async () => {
    using repo = tempRepo();
    await using session = await testSession(repo.path);
    const r = await session.bash("echo FIRST; head -c 100000000 /dev/zero | tr '\\0' 'x'; echo; echo LAST", {
      timeoutMs: 170_000,
    });
    expect(r.exitCode).toBe(0);
    expect(r.truncated).toBe(true);
    expect(r.output.startsWith("FIRST\n")).toBe(true);
    expect(r.output.trimEnd().endsWith("LAST")).toBe(true);
    expect(r.output).toMatch(/bytes of output cut/);
    expect(r.output.length).toBeLessThan(session.maxOutputBytes + 500);
    expect((await session.bash("echo fine")).output).toBe("fine\n");
  });

  it("holds no process on the host: its terminals are execs attached through the engine API", async () => {
    using repo = tempRepo();
    await using session = await testSession(repo.path);
    expect((await session.bash("echo out; echo err >&2")).stderr).toBe("err\n");
    expect(childProcesses()).toEqual([]);
  });

  it("leaves no old shell behind when asked for a fresh one", async () => {
    using repo = tempRepo();
    await using session = await testSession(repo.path);
    await session.bash("export GONE=1");
    await session.shell.restart();
    await session.shell.restart();
    const shells = "ps -e -o args= | grep -c '^bash --noprofile --norc /dev/stdin$'";
    await expect.poll(async () => (await session.bash(shells)).output, { timeout: 5_000 }).toBe("1\n");
    expect((await session.bash('echo "${GONE-unset}"')).output).toBe("unset\n");
  });

  it("strips ANSI control sequences and survives stty raw and a long command line", async () => {
    using repo = tempRepo();
    await using session = await testSession(repo.path);
    const r = await session.bash(String.raw`printf '\033[31mred\033[0m\n'`);
    expect(r.output).toBe("red\n");
    await session.bash("stty raw -echo < /dev/tty; stty sane < /dev/tty");
    const long = "x".repeat(20_000);
    expect((await session.bash(`echo ${long} | wc -c`)).output).toBe("20001\n");
  });
});

/** The command lines of this process's children (the shell once ran `docker exec -it` here). */
function childProcesses(): string[] {
  const children: string[] = [];
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, "utf8");
      const parent = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
      if (parent === process.pid) {
        children.push(readFileSync(`/proc/${name}/cmdline`, "utf8").replace(/\0/g, " ").trim());
      }
    } catch {
      // Gone while read.
    }
  }
  return children;
}
