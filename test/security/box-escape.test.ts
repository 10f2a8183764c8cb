/**
 * Escape attempts from inside a box: the privileged system calls and setuid programs that could
 * give back what the hardening took away, the engine's socket, and host paths. Each attempt is
 * made and must give nothing. (Capabilities, NoNewPrivs, seccomp, uid, the read-only root and the
 * usual socket paths are checked in test/integration/hardening.test.ts.)
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Engine } from "../../src/engine/engine.js";
import { RUN_DIR_IN_BOX } from "../../src/sandbox/box-profile.js";
import type { Session } from "../../src/session/session.js";
import { tempRepo, type TempRepo } from "../helpers/repos.js";
import { boxRuntime } from "../helpers/runtime.js";
import { testSession } from "../helpers/sessions.js";

describe("escape attempts from a box", () => {
  let repo: TempRepo;
  let session: Session;

  beforeAll(async () => {
    repo = tempRepo();
    session = await testSession(repo.path);
  });

  afterAll(async () => {
    await session?.destroy();
    repo?.[Symbol.dispose]();
  });

  const run = async (command: string): Promise<string> => (await session.bash(command)).output;

  it("mount, unshare, mknod, chroot and kernel interfaces give nothing", async () => {
    const attempts: Array<[string, RegExp]> = [
      [
        "mount -t tmpfs none /tmp 2>&1; echo rc=$?",
        /must be superuser|Operation not permitted|permission denied/i,
      ],
      [
        "mount --bind /workspace /tmp 2>&1; echo rc=$?",
        /must be superuser|Operation not permitted|permission denied/i,
      ],
      ["unshare --user --map-root-user id 2>&1; echo rc=$?", /Operation not permitted/],
      ["unshare --mount --pid --fork true 2>&1; echo rc=$?", /Operation not permitted/],
      ["mknod /tmp/disk b 8 0 2>&1; echo rc=$?", /Operation not permitted/],
      ["mknod /workspace/mem c 1 1 2>&1; echo rc=$?", /Operation not permitted/],
      ["chroot /tmp /bin/true 2>&1; echo rc=$?", /Operation not permitted/],
      ["echo 1 > /proc/sys/kernel/core_pattern 2>&1; echo rc=$?", /Read-only file system|Permission denied/],
      ["echo c > /proc/sysrq-trigger 2>&1; echo rc=$?", /No such file|Read-only|Permission denied/],
      ["dmesg 2>&1; echo rc=$?", /Operation not permitted/],
      ["touch /sys/fs/cgroup/memory/x 2>&1; echo rc=$?", /Read-only file system|Permission denied/],
      // bpf(2) and keyctl(2) are refused by the seccomp profile and the missing capabilities.
      [
        'python3 -c "import ctypes,os; l=ctypes.CDLL(None,use_errno=True); print(l.syscall(321,0,0,0), os.strerror(ctypes.get_errno()))" 2>&1',
        /^-1 Operation not permitted/,
      ],
    ];
    // Under gVisor (runsc) these reach gVisor's own kernel, not the host's: some succeed there and
    // give nothing on the host. Each is checked for what it does give.
    const underGvisor: Record<string, RegExp> = {
      // A user namespace of gVisor's kernel: root in it, and still no mount (the next attempts).
      "unshare --user --map-root-user id 2>&1; echo rc=$?": /^uid=0\(root\)/,
      // Device nodes in gVisor's own file systems, leading to no device (opened below).
      "mknod /tmp/disk b 8 0 2>&1; echo rc=$?": /^rc=0\n$/,
      "mknod /workspace/mem c 1 1 2>&1; echo rc=$?": /^rc=0\n$/,
      // gVisor's made-up boot log, not the host's.
      "dmesg 2>&1; echo rc=$?": /Starting gVisor/,
      // gVisor has no cgroup file system in the box at all.
      "touch /sys/fs/cgroup/memory/x 2>&1; echo rc=$?": /No such file or directory/,
    };
    if (boxRuntime() === "runsc") {
      attempts.push(
        ["head -c1 /tmp/disk 2>&1; echo rc=$?", /No such device or address/],
        ["head -c1 /workspace/mem 2>&1; echo rc=$?", /No such device or address/],
        [
          "unshare --user --map-root-user --mount mount -t tmpfs none /tmp 2>&1; echo rc=$?",
          /Operation not permitted/,
        ],
      );
    }
    for (const [command, refused] of attempts) {
      const output = await run(command);
      const gvisor = boxRuntime() === "runsc" ? underGvisor[command] : undefined;
      expect(output, command).toMatch(gvisor ?? refused);
      if (!gvisor && output.includes("rc=")) expect(output, command).not.toMatch(/rc=0\n$/);
    }
  });

  it("setuid programs give no privilege: none is setuid, and su, newgrp and passwd fail", async () => {
    expect(await run("find / -xdev -perm /6000 -type f 2>/dev/null | head; echo end")).toBe("end\n");
    for (const command of ["su -c id root", "newgrp root", "passwd -d agent", "sudo id"]) {
      // Without a controlling terminal, so a password prompt fails instead of waiting.
      const output = await run(`timeout 10 setsid -w ${command} </dev/null 2>&1; echo rc=$?`);
      expect(output, command).not.toMatch(/uid=0|rc=0\n$/);
    }
    // A setuid bit the box sets on its own file means nothing: the mounts are nosuid and
    // no-new-privileges holds.
    const own = await run(
      "cp /usr/bin/id /tmp/myid && chmod u+s /tmp/myid 2>&1; /tmp/myid -u 2>&1; grep -c nosuid /proc/self/mountinfo",
    );
    expect(own.split("\n")[0]).toMatch(/^1000$|Permission denied/);
    expect(await run("id -u; id -G")).toBe("1000\n1000\n");
  });

  it("has no engine socket anywhere and no host path at all", async () => {
    expect(
      await run(
        "find / -xdev \\( -name 'docker.sock' -o -name 'containerd.sock' -o -name 'podman.sock' \\) 2>/dev/null; " +
          "ls /run /var/run 2>&1; echo end",
      ),
    ).not.toMatch(/docker\.sock|containerd\.sock|podman\.sock|docker\n|containerd\n/);
    const socketsInBox = await run("find / -type s 2>/dev/null | grep -v '^/proc/' ; echo end");
    expect(socketsInBox).toBe("end\n");
    const info = await (await Engine.connect()).inspect(session.box.id);
    // No mount of a host path or a volume: the engine's record of every mount is its tmpfs ones.
    expect((info.Mounts ?? []).filter((m) => m.Type !== "tmpfs")).toEqual([]);
    expect(info.HostConfig.Binds ?? []).toEqual([]);
    expect(info.HostConfig.Mounts ?? []).toEqual([]);
    expect(Object.keys(info.HostConfig.Tmpfs ?? {}).sort()).toEqual(["/home/agent", "/tmp", "/workspace"]);
    expect(info.HostConfig).toMatchObject({
      Privileged: false,
      NetworkMode: "none",
      IpcMode: "private",
      ReadonlyRootfs: true,
      CapDrop: ["ALL"],
      SecurityOpt: ["no-new-privileges:true"],
    });
    expect(info.HostConfig.CapAdd ?? []).toEqual([]);
    expect(info.HostConfig.Devices ?? []).toEqual([]);
    expect(info.HostConfig.PidMode ?? "").toBe("");
    expect(info.HostConfig.UsernsMode ?? "").toBe("");
    // Inside, the mount table agrees: nothing at /run/drydock in a box without egress.
    expect(
      await run(
        `awk '$5 == "${RUN_DIR_IN_BOX}"' /proc/self/mountinfo; ls -d ${RUN_DIR_IN_BOX} 2>&1; echo end`,
      ),
    ).toMatch(/No such file or directory\nend\n$/);
  });
});
