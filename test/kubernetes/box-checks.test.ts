/**
 * The security suite's box checks on a real cluster, under runc and under gVisor (the RuntimeClass
 * `gvisor`): the box's user, capabilities, privileges, seccomp, read-only root, limits, no service
 * account token, and no route to a host service, another Pod, the metadata address or the API
 * server. Each listener a probe must not reach is first shown reachable from where it runs.
 */
import { connect as netConnect, createServer, type Server } from "node:net";
import { execFileSync } from "node:child_process";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { KubernetesEngine } from "../../src/engine/kubernetes/kubernetes-engine.js";
import { Box } from "../../src/sandbox/box.js";
import type { BoxRuntime } from "../../src/sandbox/box-runtime.js";
import { testNamespace, type TestNamespace } from "../helpers/kube.js";
import { sandboxImage } from "../helpers/sessions.js";

const run = async (box: Box, script: string): Promise<{ out: string; code: number }> => {
  const r = await box.sh(script, [], { timeoutMs: 60_000 });
  return { out: r.stdout.toString("utf8") + r.stderr.toString("utf8"), code: r.exitCode };
};

/** A TCP connect from inside the box, 3 s at most: "open" or why not. */
const connect = (box: Box, host: string, port: number) =>
  run(
    box,
    `python3 -c "import socket; s=socket.socket(socket.AF_INET6 if ':' in '${host}' else socket.AF_INET); s.settimeout(3); s.connect(('${host}', ${port})); print('open')" 2>&1 | tail -1`,
  ).then((r) => r.out.trim());

describe.each<BoxRuntime>(["runc", "runsc"])("a box on the cluster under %s", (runtime) => {
  let ns: TestNamespace;
  let engine: KubernetesEngine;
  let box: Box;
  let neighbour: Box;
  let listener: Server;
  let port = 0;

  beforeAll(async () => {
    ns = await testNamespace(`checks-${runtime}`);
    engine = await ns.engine();
    const options = { image: sandboxImage(), runtime, memoryMB: 512, cpus: 1, pidsLimit: 256 };
    [box, neighbour] = await Promise.all([
      Box.create(engine, `check-${runtime}-a`, options),
      Box.create(engine, `check-${runtime}-b`, options),
    ]);
    // A host service on every address: what a Pod on a plain bridge reaches at its gateway.
    listener = createServer((socket) => socket.end("host\n"));
    await new Promise<void>((resolve) => listener.listen(0, "::", resolve));
    port = (listener.address() as { port: number }).port;
  });

  afterAll(async () => {
    listener?.close();
    await Promise.allSettled([box?.remove(), neighbour?.remove()]);
    await ns?.[Symbol.asyncDispose]();
  });

  it("runs as uid 1000 with no capabilities, no new privileges, seccomp, and no service account token", async () => {
    expect((await run(box, "id -u; id -g")).out).toBe("1000\n1000\n");
    const status = (await run(box, "grep -E '^(CapEff|CapPrm|CapBnd|NoNewPrivs|Seccomp):' /proc/self/status"))
      .out;
    expect(status).toMatch(/CapEff:\s+0000000000000000/);
    expect(status).toMatch(/CapPrm:\s+0000000000000000/);
    expect(status).toMatch(/NoNewPrivs:\s+1/);
    // gVisor's own kernel answers /proc: the sandbox runs under seccomp, its processes show 0.
    expect(status).toMatch(runtime === "runsc" ? /Seccomp:\s+[02]/ : /Seccomp:\s+2/);
    expect((await run(box, "ls /var/run/secrets/kubernetes.io 2>&1; echo rc=$?")).out).toMatch(/rc=2/);
    // No service's address but the API's own, which Kubernetes always gives (and the box cannot reach: below).
    expect(
      (await run(box, "env | grep _SERVICE_HOST= | grep -vc ^KUBERNETES_SERVICE_HOST= ; true")).out.trim(),
    ).toBe("0");
    const pod = (await ns.pods()).find((p) => p.metadata?.name === box.id)!;
    expect(pod.spec?.runtimeClassName).toBe(runtime === "runsc" ? "gvisor" : undefined);
  });

  it("leaves the node no file the box can fill: the termination log out of reach, no stream the node logs", async () => {
    // The kubelet's termination-message file is on the node's disk and writable by anyone; the
    // command's own streams would be the node's log of the container.
    const tries = await run(
      box,
      [
        'for f in /dev/termination-log /root/.drydock-termination-log; do ( exec 2>/dev/null; head -c 4000000 /dev/zero > "$f" ) && echo "$f: written" || echo "$f: refused"; done',
        'p=$(ps -eo pid=,args= | awk \'$2 == "sleep" && $3 == "infinity" { print $1; exit }\')',
        'echo "fd 1: $(readlink /proc/$p/fd/1)"; head -c 4000000 /dev/zero > /proc/$p/fd/1; head -c 4000000 /dev/zero > /proc/$p/fd/2',
      ].join("\n"),
    );
    expect(tries.out).toBe(
      "/dev/termination-log: refused\n/root/.drydock-termination-log: refused\nfd 1: /dev/null\n",
    );
    const logged = await ns.core.readNamespacedPodLog({ name: box.id, namespace: ns.name, container: "box" });
    expect(String(logged ?? "")).toBe("");
  });

  it("refuses writes outside /workspace, /tmp and the home directory", async () => {
    for (const path of ["/etc/x", "/usr/bin/x", "/x"]) {
      expect((await run(box, `touch ${path} 2>&1; echo rc=$?`)).out).toMatch(
        /Read-only file system|Permission denied/,
      );
    }
    expect((await run(box, "touch /workspace/ok /tmp/ok ~/ok && echo written")).out).toBe("written\n");
  });

  it("holds its memory, process and open-file limits", async () => {
    const memory =
      runtime === "runc"
        ? Number(
            (
              await run(
                box,
                "cat /sys/fs/cgroup/memory.max 2>/dev/null || cat /sys/fs/cgroup/memory/memory.limit_in_bytes",
              )
            ).out,
          )
        : Number(/MemTotal:\s+(\d+) kB/.exec((await run(box, "cat /proc/meminfo")).out)?.[1]) * 1024;
    expect(memory).toBe(512 * 1024 * 1024);
    expect((await run(box, "ulimit -n")).out.trim()).toBe("4096");
    // A program cannot raise the open-files limit again.
    expect((await run(box, "ulimit -n 8192 2>&1; echo rc=$?")).out).toMatch(/rc=1/);
  });

  it("reaches no host service, no other Pod, no metadata address and no API server", async () => {
    const pod = (await ns.pods()).find((p) => p.metadata?.name === box.id)!;
    const other = (await ns.pods()).find((p) => p.metadata?.name === neighbour.id)!;
    const bridge = pod.status?.podIP ? pod.status.podIP.replace(/\.\d+$/, ".1") : undefined;
    // The machine's own address: the source of its default route (asked of the kernel, nothing sent).
    const primary = /\bsrc (\S+)/.exec(
      execFileSync("ip", ["route", "get", "1.1.1.1"], { encoding: "utf8" }),
    )?.[1];
    const hostAddresses = primary ? [primary] : [];
    // Each target answers from the host, so a refusal in the box is the box's wall.
    for (const host of [...(bridge ? [bridge] : []), ...hostAddresses]) {
      await new Promise<void>((resolve, reject) => {
        const s = netConnect(port, host, () => (s.end(), resolve()));
        s.on("error", reject);
      });
      expect(await connect(box, host, port), `host service at ${host}:${port}`).not.toBe("open");
      expect(await connect(box, host, 6443), `API server at ${host}:6443`).not.toBe("open");
    }
    expect(await connect(box, "169.254.169.254", 80)).not.toBe("open");
    expect(await connect(box, "10.96.0.1", 443)).not.toBe("open");
    // Another Pod listening on every address: reachable from itself, not from the box.
    void neighbour.sh("python3 -m http.server 8000 --bind 0.0.0.0 >/dev/null 2>&1 &", [], {
      timeoutMs: 10_000,
    });
    await expect.poll(() => connect(neighbour, "127.0.0.1", 8000), { timeout: 20_000 }).toBe("open");
    if (other.status?.podIP) expect(await connect(box, other.status.podIP, 8000)).not.toBe("open");
    const links = (await run(box, "cat /proc/net/dev")).out;
    if (runtime === "runsc") expect(links).not.toMatch(/eth0/);
  });

  it("stops a fork bomb at the box's process limit, and the box goes on", async () => {
    // A box of its own: a fork bomb is the one check that may cost a box.
    const bombed = await Box.create(engine, `check-${runtime}-bomb`, {
      image: sandboxImage(),
      runtime,
      memoryMB: 512,
      cpus: 1,
    });
    const bomb = await run(
      bombed,
      `python3 -c '
import os, signal, time
kids = []
try:
    for i in range(1200):
        pid = os.fork()
        if pid == 0:
            os.execv("/bin/sleep", ["sleep", "30"])
        kids.append(pid)
except OSError as e:
    print("refused", e.errno)
print("started=%d" % len(kids))
for k in kids:
    os.kill(k, signal.SIGKILL)
'`,
    );
    const started = Number(/started=(\d+)/.exec(bomb.out)?.[1] ?? "600");
    // runc: the node's per-Pod limit (1024, the test cluster's podPidsLimit); gVisor: the box's own
    // RLIMIT_NPROC inside its sandbox (half the box's 256: see runscProcesses).
    expect(bomb.out).toMatch(/refused 11/);
    expect(started).toBeLessThan(runtime === "runsc" ? 128 : 1024);
    expect((await run(bombed, "echo alive")).out).toBe("alive\n");
    await bombed.remove();
  });

  // Last: under gVisor the whole box may go with the program (see docs/kubernetes.md).
  it("contains a memory bomb at the memory limit", async () => {
    const hog = await run(
      box,
      "python3 -c 'b = bytearray(900 * 1024 * 1024); print(len(b))' 2>&1; echo rc=$?",
    ).catch((error: Error) => ({ out: error.message, code: -1 }));
    expect(hog.out).not.toMatch(/^943718400$/m);
    if (runtime === "runc") {
      expect(hog.out).toMatch(/rc=(137|1)/);
      expect((await run(box, "echo alive")).out).toBe("alive\n");
    } else {
      // gVisor's sandbox is the Pod's memory cgroup's largest process: the kernel's OOM killer
      // ends the box as a whole, and the Pod says so.
      const state = await engine.boxState(box.id);
      expect(
        state?.running === true || state?.oomKilled === true || state?.exitCode === 137,
        JSON.stringify(state),
      ).toBe(true);
    }
    // The neighbour, in the same namespace and on a node with it, is untouched.
    expect((await run(neighbour, "echo alive")).out).toBe("alive\n");
  });
});
