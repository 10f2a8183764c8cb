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

  it("interrupts a command past its limit and the shell keeps its state", async () => {
    using repo = tempRepo();
    await using session = await testSession(repo.path);
    await session.bash("cd /tmp && export KEEP=1");
    const r = await session.bash("echo start; sleep 60", { timeoutMs: 1_000 });
    expect(r.timedOut).toBe(true);
    expect(r.exitCode).toBeNull();
    expect(r.restarted).toBe(false);
    expect(r.output).toContain("start");
    expect((await session.bash('echo "$PWD $KEEP"')).output).toBe("/tmp 1\n");
  });

  it("kills a command that ignores SIGINT", async () => {
    using repo = tempRepo();
    await using session = await testSession(repo.path);
    const r = await session.bash("trap '' INT; sleep 60", { timeoutMs: 1_000 });
    expect(r.timedOut).toBe(true);
    expect(r.note).toMatch(/SIGKILL|restarted/);
    expect((await session.bash("echo ok")).output).toBe("ok\n");
  });

  it("restarts a shell that exits and says so", async () => {
    using repo = tempRepo();
    await using session = await testSession(repo.path);
    await session.bash("cd /tmp");
    const r = await session.bash("exit 3");
    expect(r.restarted).toBe(true);
    expect(r.note).toMatch(/new shell/);
    const after = await session.bash("pwd");
    expect(after.output).toBe("/workspace\n");
    expect((await session.bash("kill -9 $$")).restarted).toBe(true);
    expect((await session.bash("echo back")).output).toBe("back\n");
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
