/** Box Pods for the tests against a real cluster: made by podFor, running before they are used. */
import { execFileSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import type { CoreV1Api, V1Pod } from "@kubernetes/client-node";
import { BOX_CONTAINER, podFor } from "../../src/engine/kubernetes/pod-manifest.js";
import { boxSpec } from "../../src/sandbox/box-profile.js";

export const IMAGE = process.env.DRYDOCK_IMAGE ?? "drydock-sandbox:latest";

/** KUBECONFIG, or the test cluster's; fails with the fix when there is none. */
export function kubeconfigPath(): string {
  let path = process.env.KUBECONFIG;
  if (!path) {
    const out = execFileSync("bash", ["scripts/kube/cluster.sh", "env"], { encoding: "utf8" });
    path = /^KUBECONFIG=(.*)$/m.exec(out)?.[1] ?? "";
  }
  if (!path || !existsSync(path)) {
    throw new Error("no cluster: run `scripts/kube/cluster.sh up` first (or set KUBECONFIG)");
  }
  return path;
}

function hostHasAppArmor(): boolean {
  const p = "/sys/module/apparmor/parameters/enabled";
  return existsSync(p) && readFileSync(p, "utf8").trim() === "Y";
}

/** Makes a box's Pod under `runtime` and waits until its box container runs; resolves with its name. */
export async function newBoxPod(
  core: CoreV1Api,
  namespace: string,
  runtime: "runc" | "runsc",
  tag: string,
): Promise<string> {
  const name = `drydock-${tag}${process.pid.toString(16)}`;
  const spec = boxSpec(
    // runc is the nodes' default handler: no RuntimeClass (podFor maps only named ones)
    { image: IMAGE, runtime: runtime === "runsc" ? "runsc" : undefined, memoryMB: 256, cpus: 0.5 },
    name,
  );
  const body = podFor(spec, { namespace, imagePullPolicy: "Never", appArmor: hostHasAppArmor() }) as V1Pod;
  await core.createNamespacedPod({ namespace, body });
  await waitRunning(core, namespace, name);
  return name;
}

export async function waitRunning(core: CoreV1Api, namespace: string, name: string): Promise<V1Pod> {
  const deadline = Date.now() + 120_000;
  for (;;) {
    const pod = await core.readNamespacedPod({ name, namespace });
    const box = pod.status?.containerStatuses?.find((c) => c.name === BOX_CONTAINER);
    if (box?.state?.running) return pod;
    const waiting = box?.state?.waiting;
    if (waiting?.reason && /Err|BackOff|Invalid/.test(waiting.reason)) {
      throw new Error(`pod ${name}: ${waiting.reason}: ${waiting.message ?? ""}`);
    }
    if (pod.status?.phase === "Failed" || Date.now() > deadline) {
      throw new Error(`pod ${name} did not start: ${JSON.stringify(pod.status)}`);
    }
    await new Promise((r) => setTimeout(r, 250));
  }
}
