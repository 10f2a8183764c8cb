/**
 * kubeExec and kubeTerminal against box Pods on a real cluster, one under runc and one under gVisor
 * (RuntimeClass "gvisor"): the Docker exec's contract (test/integration's exec tests) over the
 * pods/exec WebSocket. Needs a cluster: `scripts/kube/cluster.sh up`; run with
 * `npx vitest run --project kubernetes test/kubernetes/kube-exec.test.ts`.
 */
import { createHash } from "node:crypto";
import { Readable } from "node:stream";
import { beforeAll, describe, expect, it } from "vitest";
import { kubeExec, type PodTarget } from "../../src/engine/kubernetes/kube-exec.js";
import { BoxGoneError, CommandTimeoutError } from "../../src/util/errors.js";
import { newBoxPod, podNamespace } from "./kube-pods.js";

const MB = 1024 * 1024;

/** A stream of `total` bytes made as they are read, never held whole. */
function generated(total: number, chunkBytes = 64 * 1024): { stream: Readable; sha256: string } {
  const hash = createHash("sha256");
  const chunk = Buffer.alloc(chunkBytes);
  for (let i = 0; i < chunkBytes; i++) chunk[i] = (i * 31 + 7) & 0xff;
  for (let sent = 0; sent < total; sent += chunkBytes)
    hash.update(chunk.subarray(0, Math.min(chunkBytes, total - sent)));
  let sent = 0;
  const stream = new Readable({
    read() {
      if (sent >= total) return void this.push(null);
      const part = chunk.subarray(0, Math.min(chunkBytes, total - sent));
      sent += part.length;
      this.push(Buffer.from(part));
    },
  });
  return { stream, sha256: hash.digest("hex") };
}

/**
 * The most the process's RSS grew above its start while `work` ran, sampled after a full garbage
 * collection each time: what is kept, not what is waiting to be collected.
 */
async function rssGrowth<T>(work: () => Promise<T>): Promise<{ result: T; growthBytes: number }> {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (!gc)
    throw new Error("run with node --expose-gc (the kubernetes project in vitest.config.ts passes it)");
  const live = (): number => {
    gc();
    return process.memoryUsage().rss;
  };
  const before = live();
  let peak = before;
  const timer = setInterval(() => (peak = Math.max(peak, live())), 50);
  try {
    const result = await work();
    peak = Math.max(peak, live());
    return { result, growthBytes: peak - before };
  } finally {
    clearInterval(timer);
  }
}

describe("kubeExec and kubeTerminal on a real cluster", () => {
  const ns = podNamespace("kexec");

  for (const runtime of ["runc", "runsc"] as const) {
    describe(`under ${runtime}`, () => {
      let box: PodTarget;

      beforeAll(async () => {
        const pod = await newBoxPod(ns.core, ns.name, runtime, `x${runtime === "runsc" ? "g" : "r"}`);
        box = ns.target(pod);
      });

      it("gives the program's exit code, 126 with the runtime's words for one that cannot start", async () => {
        expect((await kubeExec(box, ["true"])).exitCode).toBe(0);
        expect((await kubeExec(box, ["sh", "-c", "exit 3"])).exitCode).toBe(3);
        const missing = await kubeExec(box, ["no-such-program"]);
        expect(missing.exitCode).toBe(126);
        expect(missing.stdout.toString()).toMatch(/no-such-program/);
        // Through env (a workdir or env): env's own codes, as a shell's.
        const wrapped = await kubeExec(box, ["no-such-program"], { workdir: "/tmp" });
        expect(wrapped.exitCode).toBe(127);
      });

      it("keeps stdout and stderr apart, and applies workdir and env", async () => {
        const result = await kubeExec(box, ["sh", "-c", 'echo out; echo err >&2; echo "$PWD $GREETING"'], {
          workdir: "/tmp",
          env: { GREETING: "hello world" },
        });
        expect(result.stdout.toString()).toBe("out\n/tmp hello world\n");
        expect(result.stderr.toString()).toBe("err\n");
        expect(result.truncated).toBe(false);
      });

      it("round-trips all 256 byte values from stdin to stdout", async () => {
        const all = Buffer.from(Array.from({ length: 256 * 4 }, (_, i) => i & 0xff));
        const result = await kubeExec(box, ["cat"], { stdin: all });
        expect(result.stdout.equals(all)).toBe(true);
      });

      it("streams 50 MB of stdin with backpressure: the right hash, host memory bounded", async () => {
        const input = generated(50 * MB);
        const { result, growthBytes } = await rssGrowth(() =>
          kubeExec(box, ["sha256sum"], { stdin: input.stream, timeoutMs: 170_000 }),
        );
        expect(result.exitCode).toBe(0);
        expect(result.stdout.toString().split(" ")[0]).toBe(input.sha256);
        console.log(`50 MB of stdin under ${runtime}: RSS grew ${(growthBytes / MB).toFixed(1)} MB`);
        expect(growthBytes).toBeLessThan(25 * MB);
      }, 180_000);

      it("closes stdin while the output still flows back", async () => {
        const result = await kubeExec(box, ["sh", "-c", "cat; echo after-eof; sleep 1; echo done"], {
          stdin: "typed\n",
        });
        expect(result.stdout.toString()).toBe("typed\nafter-eof\ndone\n");
      });

      it("caps each stream, says truncated, and hands every chunk to onStdout first", async () => {
        const chunks: Buffer[] = [];
        const result = await kubeExec(box, ["head", "-c", "300000", "/dev/zero"], {
          maxOutputBytes: 1000,
          onStdout: (chunk) => chunks.push(chunk),
        });
        expect(result.stdout.length).toBe(1000);
        expect(result.truncated).toBe(true);
        expect(Buffer.concat(chunks).length).toBe(300_000);
      });

      it("drops a 200 MB flood past the cap without growing host memory", async () => {
        const { result, growthBytes } = await rssGrowth(() =>
          kubeExec(box, ["head", "-c", String(200 * MB), "/dev/zero"], {
            maxOutputBytes: MB,
            timeoutMs: 170_000,
          }),
        );
        expect(result.exitCode).toBe(0);
        expect(result.stdout.length).toBe(MB);
        expect(result.truncated).toBe(true);
        console.log(`200 MB of stdout under ${runtime}: RSS grew ${(growthBytes / MB).toFixed(1)} MB`);
        expect(growthBytes).toBeLessThan(25 * MB);
      }, 180_000);

      it("times out with the output so far, and is cancelled by its signal", async () => {
        const timedOut = kubeExec(box, ["sh", "-c", "echo begun; sleep 30"], { timeoutMs: 1500 });
        const error = (await timedOut.catch((e: unknown) => e)) as CommandTimeoutError;
        expect(error).toBeInstanceOf(CommandTimeoutError);
        expect(error.output).toBe("begun\n");
        const controller = new AbortController();
        setTimeout(() => controller.abort(), 1000);
        await expect(kubeExec(box, ["sleep", "30"], { signal: controller.signal })).rejects.toThrow(
          "cancelled",
        );
      });
    });
  }

  it("tells a pod that does not exist, and one deleted mid-exec, as BoxGoneError", async () => {
    const nowhere = ns.target("drydock-nonexistent");
    await expect(kubeExec(nowhere, ["true"])).rejects.toBeInstanceOf(BoxGoneError);
    const pod = await newBoxPod(ns.core, ns.name, "runc", "xd");
    const box = ns.target(pod);
    await expect(kubeExec({ ...box, container: "nope" }, ["true"])).rejects.toBeInstanceOf(BoxGoneError);
    const running = kubeExec(box, ["sh", "-c", "echo begun; sleep 60"]);
    await new Promise((r) => setTimeout(r, 1500));
    await ns.core.deleteNamespacedPod({ name: pod, namespace: ns.name, gracePeriodSeconds: 0 });
    await expect(running).rejects.toBeInstanceOf(BoxGoneError);
  });
});
