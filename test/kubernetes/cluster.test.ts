/**
 * A box's Pod, made by podFor from the same spec Docker gets, on a real cluster: one under runc and
 * one under gVisor (RuntimeClass "gvisor") on each node, each reached with `id` over the pods/exec
 * WebSocket. The kubernetes test project brings the cluster up (test/helpers/kube-setup.ts):
 * `npx vitest run --project kubernetes`.
 */
import { existsSync, readFileSync } from "node:fs";
import { Writable } from "node:stream";
import { CoreV1Api, Exec, KubeConfig, type V1Pod, type V1Status } from "@kubernetes/client-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BOX_CONTAINER, podFor } from "../../src/engine/kubernetes/pod-manifest.js";
import { LABEL_SESSION } from "../../src/engine/labels.js";
import { boxSpec } from "../../src/sandbox/box-profile.js";
import { kubeconfigPath } from "../helpers/kube.js";
import { waitRunning } from "./kube-pods.js";
import { sandboxImage } from "../helpers/sessions.js";

const NAMESPACE = `drydock-cluster-test-${process.pid}`;

function hostHasAppArmor(): boolean {
  const p = "/sys/module/apparmor/parameters/enabled";
  return existsSync(p) && readFileSync(p, "utf8").trim() === "Y";
}

interface ExecResult {
  stdout: string;
  stderr: string;
  status: V1Status;
  protocol: string;
}

function collector(): { stream: Writable; text: () => string } {
  const chunks: Buffer[] = [];
  return {
    stream: new Writable({
      write(chunk: Buffer, _enc, done) {
        chunks.push(Buffer.from(chunk));
        done();
      },
    }),
    text: () => Buffer.concat(chunks).toString("utf8"),
  };
}

/** Runs argv in the pod's box container over the exec WebSocket; resolves with its output and status. */
async function execIn(kc: KubeConfig, pod: string, argv: string[]): Promise<ExecResult> {
  const out = collector();
  const err = collector();
  return new Promise<ExecResult>((resolve, reject) => {
    let protocol = "";
    new Exec(kc)
      .exec(NAMESPACE, pod, BOX_CONTAINER, argv, out.stream, err.stream, null, false, (status) => {
        // The status comes on the error channel before the socket closes; let the output drain.
        setTimeout(() => resolve({ stdout: out.text(), stderr: err.text(), status, protocol }), 100);
      })
      .then((ws) => {
        protocol = ws.protocol;
      }, reject);
  });
}

describe("a box's Pod on a real cluster", () => {
  let kc: KubeConfig;
  let core: CoreV1Api;
  let nodes: string[] = [];

  beforeAll(async () => {
    const path = kubeconfigPath();
    if (!path || !existsSync(path)) {
      throw new Error("no cluster: run `scripts/kube/cluster.sh up` first (or set KUBECONFIG)");
    }
    kc = new KubeConfig();
    kc.loadFromFile(path);
    core = kc.makeApiClient(CoreV1Api);
    const list = await core.listNode();
    nodes = list.items
      .filter((n) => n.status?.conditions?.some((c) => c.type === "Ready" && c.status === "True"))
      .map((n) => n.metadata?.name ?? "");
    if (nodes.length === 0) throw new Error("the cluster has no Ready node (scripts/kube/cluster.sh status)");
    await core.createNamespace({ body: { metadata: { name: NAMESPACE } } });
  });

  afterAll(async () => {
    await core?.deleteNamespace({ name: NAMESPACE, gracePeriodSeconds: 0 }).catch(() => undefined);
  });

  for (const runtime of ["runc", "runsc"] as const) {
    it(`runs the hardened box under ${runtime} on every node, and exec reaches it`, async () => {
      const names: string[] = [];
      for (const [i, node] of nodes.entries()) {
        const session = `${runtime === "runsc" ? "a" : "b"}${i}${process.pid.toString(16)}`
          .padEnd(12, "0")
          .slice(0, 12);
        const spec = boxSpec(
          {
            image: sandboxImage(),
            // runc is the nodes' default handler: no RuntimeClass (podFor maps only named ones)
            runtime: runtime === "runsc" ? "runsc" : undefined,
            memoryMB: 256,
            cpus: 0.25,
            labels: { [LABEL_SESSION]: session },
          },
          `drydock-${session}`,
        );
        const pod = podFor(spec, {
          namespace: NAMESPACE,
          imagePullPolicy: "Never",
          appArmor: hostHasAppArmor(),
        });
        // One pod on each node; the scheduler would put both on the emptiest one.
        const body = { ...pod, spec: { ...pod.spec, nodeName: node } } as V1Pod;
        await core.createNamespacedPod({ namespace: NAMESPACE, body });
        names.push(`drydock-${session}`);
      }
      for (const [i, name] of names.entries()) {
        const pod = await waitRunning(core, NAMESPACE, name);
        expect(pod.spec?.nodeName).toBe(nodes[i]);
        expect(pod.spec?.runtimeClassName).toBe(runtime === "runsc" ? "gvisor" : undefined);
        const id = await execIn(kc, name, ["id"]);
        expect(id.status.status).toBe("Success");
        expect(id.stdout).toMatch(/^uid=1000\b/);
        const probe = await execIn(kc, name, [
          "sh",
          "-c",
          "grep -E '^(CapEff|NoNewPrivs)' /proc/self/status; touch /probe 2>/dev/null && echo rootfs-writable || echo rootfs-read-only; uname -r",
        ]);
        expect(probe.stdout).toMatch(/CapEff:\s+0000000000000000/);
        expect(probe.stdout).toMatch(/NoNewPrivs:\s+1/);
        expect(probe.stdout).toContain("rootfs-read-only");
        if (runtime === "runsc") expect(probe.stdout).toMatch(/gvisor/);
        else expect(probe.stdout).not.toMatch(/gvisor/);
        const failing = await execIn(kc, name, ["sh", "-c", "exit 3"]);
        expect(failing.status.status).toBe("Failure");
        expect(JSON.stringify(failing.status.details)).toContain('"3"');
        console.log(`${name} on ${nodes[i]} (${runtime}): ${id.stdout.trim()}; exec over ${id.protocol}`);
      }
      for (const name of names)
        await core.deleteNamespacedPod({ name, namespace: NAMESPACE, gracePeriodSeconds: 0 });
    });
  }
});
