/**
 * The agent owns its shell and may break it on purpose: replace it with another program, leave a
 * job printing in the background, start a full-screen editor, redirect the shell's own output,
 * shadow the builtins that frame commands. Each time the shell recovers or is replaced (with the
 * state it had before the command) and says so, and nothing of drydock's own framing shows in
 * the output. (exit, kill -9 $$, stty raw, a
 * fake completion marker, a program waiting on stdin and SIGINT-ignoring commands are in
 * test/integration/shell.test.ts.)
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Session } from "../../src/session/session.js";
import { tempRepo, type TempRepo } from "../helpers/repos.js";
import { boxRuntime } from "../helpers/runtime.js";
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
      if (boxRuntime() === "runsc" && command.endsWith("/dev/tty")) {
        // Under gVisor a command's /dev/tty is refused at once (docs/runtimes.md): nothing waits.
        expect(r).toMatchObject({ timedOut: false, exitCode: 1 });
        expect(r.output).toMatch(/\/dev\/tty: Input\/output error/);
        expect(await session.bash("echo after-vi")).toMatchObject({ output: "after-vi\n", exitCode: 0 });
        continue;
      }
      expect(r.timedOut, command).toBe(true);
      expect(r.exitCode).toBeNull();
      // Under gVisor the stop and the new shell can outlast the watchdog's margin on a loaded
      // machine: the answer then says the shell stopped answering, and the next command still runs.
      expect(r.note).toMatch(
        boxRuntime() === "runsc" ? /timed out after 2 s|the shell stopped answering/ : /timed out after 2 s/,
      );
      expect(r.output).not.toMatch(FRAMING);
      expect(await session.bash("echo after-vi")).toMatchObject({ output: "after-vi\n", exitCode: 0 });
    }
  });

  it("a shell that silenced its own output is replaced once the command's time is up, with the state from before", async () => {
    await session.bash("cd /tmp");
    const r = await session.bash("exec >/dev/null 2>&1", { timeoutMs: 2_000 });
    expect(r).toMatchObject({ timedOut: true, restarted: true });
    expect(r.note).toMatch(/A new shell was started with the working directory/);
    expect(r.output).not.toMatch(FRAMING);
    expect((await session.bash("echo heard; pwd")).output).toBe("heard\n/tmp\n");
    await session.bash("cd /workspace");
  });

  it("functions named after the frame's builtins do not break it; one named builtin is undone", async () => {
    // The frame calls its builtins through `builtin`: shadowing them changes nothing.
    await session.bash(
      "eval() { :; }; printf() { :; }; read() { :; }; export() { :; }; stty() { :; }; declare() { :; }",
    );
    expect(await session.bash("echo still-framed; (exit 4)")).toMatchObject({
      output: "still-framed\n",
      exitCode: 4,
    });
    await session.shell.restart();
    expect((await session.bash("echo back; type eval")).output).toBe("back\neval is a shell builtin\n");
    // A function named builtin hides the frame's end: the command times out and its shell is
    // replaced by one with the state from before it, without the function.
    const r = await session.bash("builtin() { :; }", { timeoutMs: 2_000 });
    expect(r).toMatchObject({ timedOut: true, restarted: true });
    expect(r.output).not.toMatch(FRAMING);
    expect((await session.bash("type -t builtin; printf '%s\\n' works")).output).toBe("builtin\nworks\n");
  });

  it("a command that kills the stderr terminal's holder: it is told, and the next command has both terminals again", async () => {
    const r = await session.bash(
      "echo before >&2; sleep 0.3; pkill -KILL -f '^bash --noprofile --norc -c stty raw'; sleep 0.3; echo out",
    );
    expect(r).toMatchObject({ stdout: "out\n", stderr: "before\n", exitCode: 0 });
    expect(r.note).toMatch(/stderr may be incomplete/);
    expect(await session.bash("echo o; echo e >&2")).toMatchObject({
      stdout: "o\n",
      stderr: "e\n",
      restarted: false,
    });
  });
});
