/**
 * The agent owns its shell and may break it on purpose: replace it with another program, leave a
 * job printing in the background, start a full-screen editor, redirect the shell's own output,
 * shadow the builtins that frame commands. Each time the shell recovers or is restarted and says
 * so, and nothing of drydock's own framing shows in the output. (exit, kill -9 $$, stty raw, a
 * fake completion marker, a program waiting on stdin and SIGINT-ignoring commands are in
 * test/integration/shell.test.ts.)
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Session } from "../../src/session/session.js";
import { tempRepo, type TempRepo } from "../helpers/repos.js";
import { testSession } from "../helpers/sessions.js";

/** Text only drydock's framing prints: a result holding it leaked the frame. */
const FRAMING = /\x1e|DDS[0-9a-f]{16}|DDE[0-9a-f]{16}|__DRYDOCK_|stty raw|trap ':' INT/;

describe("shell abuse", () => {
  let repo: TempRepo;
  let session: Session;

  beforeAll(async () => {
    repo = tempRepo();
    session = await testSession(repo.path, { commandTimeoutMs: 8_000 });
  });

  afterAll(async () => {
    await session?.destroy();
    repo?.[Symbol.dispose]();
  });

  it("exec into another program ends the shell: a new one is started, the result says so and holds only the program's output", async () => {
    for (const command of [
      "echo before; exec echo replaced",
      "cd /tmp; exec python3 -c 'print(42)'",
      "exec sleep 1",
    ]) {
      const r = await session.bash(command);
      expect(r.restarted, command).toBe(true);
      expect(r.note, command).toMatch(/shell exited .*new shell was started/);
      expect(r.output, command).not.toMatch(FRAMING);
      const after = await session.bash("pwd; echo ok");
      expect(after).toMatchObject({ output: "/workspace\nok\n", exitCode: 0, restarted: false });
    }
    expect((await session.bash("echo before; exec echo replaced")).output).toBe("before\nreplaced\n");
  });

  it("keeps answering while a background job keeps printing, with exact exit codes", async () => {
    const started = await session.bash("(while :; do echo tick; sleep 0.1; done) & echo started");
    // The job may print its first tick before or after "started".
    expect(started.output.replace(/tick\n/g, "")).toBe("started\n");
    for (let i = 0; i < 5; i++) {
      const r = await session.bash(`sleep 0.2; echo mine-${i}; (exit ${i})`);
      expect(r.exitCode).toBe(i);
      expect(r.output).toContain(`mine-${i}\n`);
      expect(r.output.replace(/tick\n/g, "")).toBe(`mine-${i}\n`);
    }
    expect((await session.bash("kill %1; wait; echo stopped")).output).toMatch(/stopped\n$/);
    await session.bash("sleep 0.3");
    expect((await session.bash("echo quiet")).output).toBe("quiet\n");
  });

  it("a full-screen editor on the terminal times out, is killed, and the shell goes on", async () => {
    for (const command of ["vi /tmp/notes.txt", "vi /tmp/other.txt < /dev/tty"]) {
      const r = await session.bash(command, { timeoutMs: 2_000 });
      expect(r.timedOut, command).toBe(true);
      expect(r.exitCode).toBeNull();
      expect(r.note).toMatch(/timed out after 2 s/);
      expect(r.output).not.toMatch(FRAMING);
      expect(await session.bash("echo after-vi")).toMatchObject({ output: "after-vi\n", exitCode: 0 });
    }
  });

  it("a shell that silenced its own output is restarted once the command's time is up", async () => {
    const r = await session.bash("exec >/dev/null 2>&1", { timeoutMs: 2_000 });
    expect(r).toMatchObject({ timedOut: true, restarted: true });
    expect(r.note).toMatch(/restarted/);
    expect(r.output).not.toMatch(FRAMING);
    expect((await session.bash("echo heard")).output).toBe("heard\n");
  });

  it("a shell whose framing builtins were shadowed is replaced by restart", async () => {
    // The box's word is only as good as the box: a function named eval makes later commands
    // report nothing. A fresh shell, which the caller can always ask for, is clean again.
    await session.bash("eval() { :; }");
    expect((await session.bash("echo lost")).output).toBe("");
    await session.shell.restart();
    expect((await session.bash("echo back; type eval")).output).toBe("back\neval is a shell builtin\n");
    // Shadowing printf hides the frame itself: the command times out and the shell is replaced.
    const r = await session.bash("printf() { :; }", { timeoutMs: 2_000 });
    expect(r.restarted).toBe(true);
    expect((await session.bash("printf '%s\\n' works")).output).toBe("works\n");
  });
});
