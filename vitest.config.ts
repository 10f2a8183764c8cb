import { mkdirSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { defineConfig } from "vitest/config";

/**
 * The state directory of this run's drydock processes (audit logs, session records, caches): one
 * of its own under the temporary directory, so tests leave nothing in the user's
 * ~/.local/state/drydock; those of earlier runs whose process is gone are removed here.
 */
function testStateDir(): string {
  if (process.env.DRYDOCK_STATE_DIR) return process.env.DRYDOCK_STATE_DIR;
  for (const name of readdirSync(tmpdir())) {
    const pid = /^drydock-test-state-(\d+)$/.exec(name)?.[1];
    if (pid === undefined || Number(pid) === process.pid) continue;
    try {
      process.kill(Number(pid), 0);
    } catch {
      rmSync(join(tmpdir(), name), { recursive: true, force: true });
    }
  }
  const dir = join(tmpdir(), `drydock-test-state-${process.pid}`);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  return dir;
}
const DRYDOCK_STATE_DIR = testStateDir();

// Four projects, all run by `npm test` and in CI: unit tests need no Docker; integration tests
// start real containers and fail (never skip) with a fix hint when no engine answers; the security
// and fault suites run a second time with boxes under gVisor (runsc); the kubernetes project runs
// sessions and box checks on a real two-node cluster the setup brings up (scripts/kube/).
export default defineConfig({
  test: {
    projects: [
      {
        test: {
          name: "unit",
          sequence: { groupOrder: 0 },
          include: ["test/unit/**/*.test.ts"],
          testTimeout: 30_000,
        },
      },
      {
        test: {
          name: "integration",
          sequence: { groupOrder: 1 },
          include: [
            "test/integration/**/*.test.ts",
            "test/security/**/*.test.ts",
            "test/faults/**/*.test.ts",
          ],
          testTimeout: 180_000,
          hookTimeout: 300_000,
          globalSetup: ["test/helpers/global-setup.ts"],
          // Servers the tests start keep no warm boxes unless a test asks (--pool): on two cores,
          // idle pools in every spawned server only slow the rest down. The pool has its own tests.
          env: { DRYDOCK_POOL: process.env.DRYDOCK_POOL ?? "0", DRYDOCK_STATE_DIR },
          // Boxes are real containers on a 2-core machine: a few files at a time.
          maxWorkers: 2,
          fileParallelism: true,
        },
      },
      {
        // The security and fault suites again with every box under gVisor (DRYDOCK_RUNTIME=runsc:
        // boxes made in the tests, and by the servers they spawn, take it). After the runc run, not
        // beside it: two cores. runsc missing fails the project with the fix (runsc-setup.ts).
        test: {
          name: "integration-runsc",
          sequence: { groupOrder: 2 },
          include: ["test/security/**/*.test.ts", "test/faults/**/*.test.ts"],
          exclude: [
            // Restarts a private dockerd of its own, which has no runsc registered; what it tests
            // (drydock across an engine restart) does not depend on the box's runtime.
            "test/faults/engine-restart.test.ts",
            // Starts dockerds of its own (no runsc registered there); placement and engine death do
            // not depend on the box's runtime, and it is the slowest fault test.
            "test/faults/engines.test.ts",
            // The HTTP server's answers to hostile input are the host's; the box's part is a
            // 3.9 MB command typed into the shell, which bash reads a byte per system call: about
            // 40 s per MB under gVisor, past the client's 60 s (docs/runtimes.md).
            "test/security/http-server.test.ts",
          ],
          testTimeout: 180_000,
          hookTimeout: 300_000,
          globalSetup: ["test/helpers/runsc-setup.ts", "test/helpers/global-setup.ts"],
          env: { DRYDOCK_POOL: process.env.DRYDOCK_POOL ?? "0", DRYDOCK_RUNTIME: "runsc", DRYDOCK_STATE_DIR },
          maxWorkers: 2,
          fileParallelism: true,
        },
      },
      {
        // Last, alone: the cluster's control plane and two kubelets share the machine's two cores.
        test: {
          name: "kubernetes",
          sequence: { groupOrder: 3 },
          include: ["test/kubernetes/**/*.test.ts"],
          testTimeout: 240_000,
          // The first file's set-up brings the cluster up: up to 15 min with a first `docker save`.
          hookTimeout: 900_000,
          globalSetup: ["test/helpers/kube-setup.ts"],
          setupFiles: ["test/helpers/kube-cluster.ts"],
          env: { DRYDOCK_POOL: "0", DRYDOCK_STATE_DIR },
          fileParallelism: false,
          // The exec tests measure what the host keeps while 50 MB go through: garbage collected first.
          execArgv: ["--expose-gc"],
        },
      },
    ],
  },
});
