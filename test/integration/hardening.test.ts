import { describe, expect, it } from "vitest";
import { tempRepo } from "../helpers/repos.js";
import { testEngine, testSession } from "../helpers/sessions.js";

describe("the box is hardened", () => {
  it("runs as a non-root user with no capabilities, no new privileges and seccomp", async () => {
    using repo = tempRepo();
    await using session = await testSession(repo.path);
    expect((await session.bash("id -u")).output).toBe("1000\n");
    const status = (await session.bash("grep -E '^(CapEff|CapPrm|NoNewPrivs|Seccomp):' /proc/self/status"))
      .output;
    expect(status).toMatch(/CapEff:\s+0000000000000000/);
    expect(status).toMatch(/CapPrm:\s+0000000000000000/);
    expect(status).toMatch(/NoNewPrivs:\s+1/);
    expect(status).toMatch(/Seccomp:\s+2/);
    expect(
      (await session.bash("ls -l /var/run/docker.sock /run/docker.sock 2>&1; echo rc=$?")).output,
    ).toMatch(/rc=2/);
  });

  it("has no network", async () => {
    using repo = tempRepo();
    await using session = await testSession(repo.path);
    const probe = (target: string) =>
      session.bash(
        `python3 -c "import socket,sys; s=socket.socket(); s.settimeout(3); s.connect(('${target}', 80))" 2>&1; echo rc=$?`,
      );
    for (const target of ["1.1.1.1", "172.17.0.1", "169.254.169.254"]) {
      expect((await probe(target)).output).toMatch(/rc=1/);
    }
    expect((await session.bash("getent hosts deb.debian.org; echo rc=$?")).output).toMatch(/rc=2/);
    expect((await session.bash("ip -o link 2>/dev/null || cat /proc/net/dev")).output).not.toMatch(/eth0/);
  });

  it("refuses writes outside /workspace, /tmp and the home directory", async () => {
    using repo = tempRepo();
    await using session = await testSession(repo.path);
    for (const path of ["/etc/x", "/usr/bin/x", "/opt/aider/x", "/x"]) {
      expect((await session.bash(`touch ${path} 2>&1; echo rc=$?`)).output).toMatch(
        /Read-only file system|Permission denied/,
      );
    }
    expect((await session.bash("touch /workspace/ok /tmp/ok ~/ok && echo written")).output).toBe("written\n");
  });

  it("stops a fork bomb at the pids limit and the host and other boxes keep working", async () => {
    using repo = tempRepo();
    await using session = await testSession(repo.path, { pidsLimit: 64 });
    await using other = await testSession(repo.path);
    const bomb = await session.bash("bomb() { bomb | bomb & }; bomb; sleep 2; echo survived", {
      timeoutMs: 15_000,
    });
    expect(bomb.output).toMatch(/fork|Resource temporarily unavailable|survived/);
    // Clean up the bomb's processes by restarting the box's shell; the other box is unaffected.
    expect((await other.bash("echo fine")).output).toBe("fine\n");
    const engine = await testEngine();
    expect((await engine.version()).version).toBeTruthy();
  });

  it("contains a memory bomb at the memory limit", async () => {
    using repo = tempRepo();
    await using session = await testSession(repo.path, { memoryMB: 256 });
    const r = await session.bash(
      "python3 -c 'a=[]\nwhile True: a.append(bytearray(16*1024*1024))'; echo rc=$?",
      {
        timeoutMs: 60_000,
      },
    );
    expect(r.output).toMatch(/rc=(137|1)/);
    expect((await session.bash("echo alive")).output).toBe("alive\n");
  });
});
