/** Box Pods for the tests against a real cluster: made by podFor, running before they are used. */
import { existsSync, readFileSync } from "node:fs";
import type { CoreV1Api, KubeConfig, V1Pod } from "@kubernetes/client-node";
import { afterAll, beforeAll } from "vitest";
import type { PodTarget } from "../../src/engine/kubernetes/kube-exec.js";
import { BOX_CONTAINER, podFor } from "../../src/engine/kubernetes/pod-manifest.js";
import { boxSpec } from "../../src/sandbox/box-profile.js";
import { sandboxImage } from "../helpers/sessions.js";

import { kubeConfig, testNamespace, type TestNamespace } from "../helpers/kube.js";

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
    { image: sandboxImage(), runtime: runtime === "runsc" ? "runsc" : undefined, memoryMB: 256, cpus: 0.5 },
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

export interface PodNamespace {
  readonly kc: KubeConfig;
  readonly core: CoreV1Api;
  readonly name: string;
  /** The box container of one of its Pods, as kubeExec and kubeTerminal take it. */
  target(pod: string): PodTarget;
}

/**
 * A namespace of the calling file's own for the tests of the describe block it is called in:
 * made before them (testNamespace), deleted with everything in it after them.
 */
export function podNamespace(label: string): PodNamespace {
  let ns: TestNamespace | undefined;
  const kc = kubeConfig();
  beforeAll(async () => {
    ns = await testNamespace(label);
  });
  afterAll(async () => {
    await ns?.[Symbol.asyncDispose]();
  });
  return {
    kc,
    get core() {
      return ns!.core;
    },
    get name() {
      return ns!.name;
    },
    target: (pod) => ({ kc, namespace: ns!.name, pod, container: BOX_CONTAINER }),
  };
}
