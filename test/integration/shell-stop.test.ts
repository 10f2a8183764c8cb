/**
 * A command past its limit stops as a whole: the rest of its command list, what it started in
 * the foreground and the background, what left the shell's session (setsid, double forks), and
 * what ignores SIGINT. Nothing of it runs after the answer; the shell keeps the state it had
 * before the command. Each scenario would, if not stopped, write a file a few seconds after the
 * answer; the files are looked for once every scenario's time has passed.
 */
import { describe, expect, it } from "vitest";
import { tempRepo } from "../helpers/repos.js";
import { testSession } from "../helpers/sessions.js";

const scenarios = {
  "the rest of the list": "sleep 8; echo AFTER > /workspace/after.txt",
  "a command list that ignores SIGINT": "trap '' INT; sleep 8; echo x > /workspace/x.txt",
  "a background job": "(sleep 6; touch /workspace/bg) & sleep 60",
  "a job in its own session": "setsid sh -c 'sleep 6; touch /workspace/setsid' & sleep 60",
  "a double-forked daemon": "(setsid sh -c 'sleep 6; touch /workspace/daemon' &); sleep 60",
  "a program that cleans up on SIGINT":
    'python3 -c \'import time\ntry:\n  time.sleep(60)\nexcept KeyboardInterrupt:\n  print("cleaned up", flush=True)\n  time.sleep(0.2)\n  open("/workspace/cleanup", "w")\n\'; touch /workspace/after-cleanup',
};

describe("a command past its limit", () => {
  it("stops as a whole: nothing of it runs after the answer, and the shell keeps its state", async () => {
    using repo = tempRepo();
    await using session = await testSession(repo.path);
    await session.bash("cd /tmp && export KEEP=kept && greet() { echo hi; }");
    let lastStart = 0;
    for (const [name, command] of Object.entries(scenarios)) {
      lastStart = Date.now();
      const r = await session.bash(`export LOST=1; cd /; ${command}`, { timeoutMs: 2_000 });
      expect(r.timedOut, name).toBe(true);
      expect(r.exitCode, name).toBeNull();
      expect(r.restarted, name).toBe(true);
      expect(r.note, name).toMatch(
        /timed out after 2 s and was stopped as a whole: .*nothing of it is left running/,
      );
      expect(Date.now() - lastStart, name).toBeLessThan(6_000);
      const after = await session.bash('echo "$PWD $KEEP ${LOST-unset}"; greet');
      expect(after, name).toMatchObject({ output: "/tmp kept unset\nhi\n", exitCode: 0, restarted: false });
    }
    const cleanup = await session.bash("cat /workspace/cleanup 2>/dev/null && echo cleanup-file");
    expect(cleanup.output).toBe("cleanup-file\n");
    // Every scenario's file would exist by now had anything of it survived.
    await new Promise((r) => setTimeout(r, Math.max(0, lastStart + 9_000 - Date.now())));
    const left = await session.bash(
      "cd /workspace && ls after.txt x.txt bg setsid daemon after-cleanup 2>/dev/null; ps -eo args | grep -E '^(sleep [0-9]|sh -c|python3)' | grep -v ' drydock-box$'; true",
    );
    expect(left.output).toBe("");
  });

  it("reports SIGINT alone when the program ends on it, with its output", async () => {
    using repo = tempRepo();
    // A grace long enough that python's exit on a loaded machine still falls within it.
    await using session = await testSession(repo.path, { interruptGraceMs: 8_000 });
    const r = await session.bash(
      'python3 -c \'import time\ntry:\n  print("working", flush=True); time.sleep(60)\nexcept KeyboardInterrupt:\n  print("interrupted, cleaning up", flush=True)\n\'',
      { timeoutMs: 2_000 },
    );
    expect(r.timedOut).toBe(true);
    expect(r.stdout).toBe("working\ninterrupted, cleaning up\n");
    expect(r.note).toMatch(/stopped as a whole: 1 process got SIGINT; nothing of it is left running/);
  });

  it("leaves alone processes that are not the command's", async () => {
    using repo = tempRepo();
    await using session = await testSession(repo.path);
    // A daemon an earlier command started outside the shell's tree, and a program run beside the shell.
    await session.bash("(setsid sleep 300 > /dev/null 2>&1 &)");
    const beside = session.box.exec(["sleep", "299"], { timeoutMs: 60_000 }).catch(() => undefined);
    await new Promise((r) => setTimeout(r, 500));
    expect((await session.bash("sleep 60", { timeoutMs: 1_000 })).timedOut).toBe(true);
    const ps = await session.box.exec(["ps", "-eo", "args"]);
    const running = ps.stdout.toString("utf8");
    expect(running).toMatch(/^sleep 300$/m);
    expect(running).toMatch(/^sleep 299$/m);
    // The box's first process (container-spec.ts HOLDER_COMMAND) is not the command's either.
    expect(running).toMatch(/^sh -c while read -r _; do :; done drydock-box$/m);
    await session.box.exec(["pkill", "-f", "^sleep 29"]);
    await beside;
  });
});
