import type { V1Node, V1Pod, V1ResourceQuota } from "@kubernetes/client-node";
import { describe, expect, it } from "vitest";
import { clusterRoom } from "../../../src/engine/kubernetes/cluster-room.js";

function node(name: string, cpu: string, memory: string, extra: Partial<V1Node> = {}): V1Node {
  return {
    metadata: { name },
    spec: extra.spec ?? {},
    status: { allocatable: { cpu, memory }, conditions: [{ type: "Ready", status: "True" }] },
    ...extra,
  } as V1Node;
}

function pod(
  namespace: string,
  nodeName: string | undefined,
  cpu: string,
  memory: string,
  phase = "Running",
  init?: { cpu: string; memory: string },
): V1Pod {
  return {
    metadata: { namespace, name: `p-${Math.random()}` },
    spec: {
      ...(nodeName ? { nodeName } : {}),
      containers: [{ name: "c", resources: { requests: { cpu, memory } } }],
      ...(init ? { initContainers: [{ name: "i", resources: { requests: init } }] } : {}),
    },
    status: { phase },
  } as V1Pod;
}

const BOX = { cpus: 1, memoryMB: 2048 };
const base = { namespace: "boxes", allNamespaces: true, quotas: [] as V1ResourceQuota[], box: BOX };

describe("the room a cluster has for boxes", () => {
  it("counts each node's allocatable less the requests bound to it, in whole boxes, summed", () => {
    const room = clusterRoom({
      ...base,
      nodes: [node("a", "2", "24Gi"), node("b", "2", "3Gi")],
      pods: [pod("other", "a", "500m", "1Gi"), pod("boxes", "b", "0", "0")],
    });
    // a: 1.5 CPU left, 23 GiB: 1 box; b: 2 CPU, 3 GiB: 1 box (memory binds).
    expect(room.fit).toBe(2);
    expect(room.why).toMatch(
      /^2 more boxes of 1 CPU and 2,048 MiB fit on the nodes \(a 1\.5 of 2 CPU .*: 1; b 2 of 2 CPU and 3,072 of 3,072 MiB free: 1; requests against allocatable, every namespace's Pods counted\)$/,
    );
  });

  it("leaves out ended Pods, and counts the larger of the containers and the biggest init container", () => {
    const nodes = [node("a", "4", "16Gi")];
    expect(clusterRoom({ ...base, nodes, pods: [pod("x", "a", "2", "1Gi", "Succeeded")] }).fit).toBe(4);
    expect(
      clusterRoom({
        ...base,
        nodes,
        pods: [pod("x", "a", "100m", "1Gi", "Running", { cpu: "3", memory: "1Gi" })],
      }).fit,
    ).toBe(1);
  });

  it("takes no node that is not Ready, is cordoned or tainted NoSchedule", () => {
    const notReady = node("n", "8", "32Gi");
    notReady.status!.conditions = [{ type: "Ready", status: "False" }];
    const room = clusterRoom({
      ...base,
      nodes: [
        notReady,
        node("c", "8", "32Gi", { spec: { unschedulable: true } }),
        node("t", "8", "32Gi", { spec: { taints: [{ key: "k", effect: "NoSchedule" }] } }),
      ],
      pods: [],
    });
    expect(room.fit).toBe(0);
    expect(room.why).toContain("no Ready node takes Pods");
  });

  it("counts the namespace's Pods still waiting for a node against the total", () => {
    const room = clusterRoom({
      ...base,
      nodes: [node("a", "4", "16Gi")],
      pods: [pod("boxes", undefined, "1", "2Gi", "Pending")],
    });
    expect(room.fit).toBe(3);
    expect(room.why).toContain("1 Pod of boxes waiting for a node");
  });

  it("is bound by a ResourceQuota's hard less used, naming it", () => {
    const quota = {
      metadata: { name: "team" },
      status: {
        hard: { "requests.memory": "5Gi", pods: "10" },
        used: { "requests.memory": "2Gi", pods: "1" },
      },
    } as V1ResourceQuota;
    const room = clusterRoom({ ...base, nodes: [node("a", "8", "32Gi")], pods: [], quotas: [quota] });
    expect(room.fit).toBe(1);
    expect(room.why).toBe(
      "1 more box of 1 CPU and 2,048 MiB fit, bound by the ResourceQuota team of boxes: requests.memory 5Gi (2Gi used); the nodes would take 8",
    );
    const full = {
      metadata: { name: "count" },
      status: { hard: { pods: "2" }, used: { pods: "2" } },
    } as V1ResourceQuota;
    expect(
      clusterRoom({ ...base, nodes: [node("a", "8", "32Gi")], pods: [], quotas: [quota, full] }).fit,
    ).toBe(0);
  });

  it("says when only its own namespace's Pods could be counted", () => {
    const room = clusterRoom({ ...base, allNamespaces: false, nodes: [node("a", "2", "8Gi")], pods: [] });
    expect(room.fit).toBe(2);
    expect(room.why).toContain("only boxes's Pods counted (drydock may not list Pods in other namespaces");
  });
});
