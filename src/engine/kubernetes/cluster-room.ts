/**
 * How many more boxes of one size a cluster can hold, as the scheduler and the quota admission
 * would count them: each Ready, schedulable node's allocatable CPU and memory less the requests of
 * the Pods bound to it (running or pending, every namespace drydock may list), in whole boxes,
 * summed over the nodes; then the namespace's ResourceQuotas (hard less used, for requests,
 * limits and Pod counts), also in whole boxes. A box's requests equal its limits (pod-manifest.ts),
 * so one number per resource serves both. Pure, so the arithmetic is tested without a cluster.
 */
import type { V1Container, V1Node, V1Pod, V1ResourceQuota } from "@kubernetes/client-node";
import { cpusOf, mebibytesOf, quantityValue } from "./kubernetes-quantity.js";

export interface BoxSize {
  cpus: number;
  memoryMB: number;
}

export interface ClusterRoom {
  /** How many more boxes of the size fit now. */
  fit: number;
  /** Why, in one sentence with the numbers. */
  why: string;
}

const round = (n: number): string => (Math.round(n * 100) / 100).toLocaleString("en-US");
const plural = (n: number, word: string): string =>
  `${n} ${word}${n === 1 ? "" : /(x|s)$/.test(word) ? "es" : "s"}`;

/** A Pod's requests as the scheduler counts them: its containers', or its largest init container's if more. */
function podRequests(pod: V1Pod): BoxSize {
  const sum = (containers: readonly V1Container[]) => {
    let cpus = 0;
    let memoryMB = 0;
    for (const c of containers) {
      cpus += cpusOf(c.resources?.requests?.cpu ?? "0");
      memoryMB += mebibytesOf(c.resources?.requests?.memory ?? "0");
    }
    return { cpus, memoryMB };
  };
  const main = sum(pod.spec?.containers ?? []);
  let cpus = main.cpus;
  let memoryMB = main.memoryMB;
  for (const c of pod.spec?.initContainers ?? []) {
    cpus = Math.max(cpus, cpusOf(c.resources?.requests?.cpu ?? "0"));
    memoryMB = Math.max(memoryMB, mebibytesOf(c.resources?.requests?.memory ?? "0"));
  }
  if (pod.spec?.overhead) {
    cpus += cpusOf(pod.spec.overhead.cpu ?? "0");
    memoryMB += mebibytesOf(pod.spec.overhead.memory ?? "0");
  }
  return { cpus, memoryMB };
}

const ended = (pod: V1Pod): boolean => pod.status?.phase === "Succeeded" || pod.status?.phase === "Failed";

function nodeUsable(node: V1Node): boolean {
  if (node.spec?.unschedulable) return false;
  // A taint drydock's Pods do not tolerate (they tolerate none) keeps them off the node.
  if ((node.spec?.taints ?? []).some((t) => t.effect === "NoSchedule" || t.effect === "NoExecute"))
    return false;
  return (node.status?.conditions ?? []).some((c) => c.type === "Ready" && c.status === "True");
}

/** Boxes of `box` that fit in `free`; Infinity only for a size of nothing. */
function boxesIn(free: BoxSize, box: BoxSize): number {
  const byCpu = box.cpus > 0 ? Math.floor(free.cpus / box.cpus + 1e-9) : Infinity;
  const byMemory = box.memoryMB > 0 ? Math.floor(free.memoryMB / box.memoryMB + 1e-9) : Infinity;
  return Math.max(0, Math.min(byCpu, byMemory));
}

/** What one quota leaves for boxes of `box`, and which resource binds it. */
function quotaRoom(quota: V1ResourceQuota, box: BoxSize): { fit: number; what: string } | undefined {
  const hard = quota.status?.hard ?? quota.spec?.hard ?? {};
  const used = quota.status?.used ?? {};
  let best: { fit: number; what: string } | undefined;
  const consider = (key: string, per: number, value: (q: string) => number) => {
    if (hard[key] === undefined) return;
    const left = value(hard[key]) - value(used[key] ?? "0");
    const fit = per > 0 ? Math.max(0, Math.floor(left / per + 1e-9)) : Infinity;
    if (!best || fit < best.fit) best = { fit, what: `${key} ${hard[key]} (${used[key] ?? "0"} used)` };
  };
  for (const key of ["requests.cpu", "limits.cpu", "cpu"]) consider(key, box.cpus, cpusOf);
  for (const key of ["requests.memory", "limits.memory", "memory"]) consider(key, box.memoryMB, mebibytesOf);
  for (const key of ["pods", "count/pods"]) consider(key, 1, quantityValue);
  return best;
}

export interface RoomInput {
  nodes: readonly V1Node[];
  /** Pods drydock may list: every namespace's, or only its own. */
  pods: readonly V1Pod[];
  /** Whether `pods` holds every namespace's Pods, or only the boxes' namespace's. */
  allNamespaces: boolean;
  namespace: string;
  quotas: readonly V1ResourceQuota[];
  box: BoxSize;
}

export function clusterRoom(input: RoomInput): ClusterRoom {
  const { box } = input;
  const usable = input.nodes.filter(nodeUsable);
  const perNode: string[] = [];
  let nodesFit = 0;
  for (const node of usable) {
    const name = node.metadata?.name ?? "?";
    const allocatable = {
      cpus: cpusOf(node.status?.allocatable?.cpu ?? "0"),
      memoryMB: mebibytesOf(node.status?.allocatable?.memory ?? "0"),
    };
    const requested = { cpus: 0, memoryMB: 0 };
    for (const pod of input.pods) {
      if (pod.spec?.nodeName !== name || ended(pod)) continue;
      const r = podRequests(pod);
      requested.cpus += r.cpus;
      requested.memoryMB += r.memoryMB;
    }
    const free = {
      cpus: allocatable.cpus - requested.cpus,
      memoryMB: allocatable.memoryMB - requested.memoryMB,
    };
    const fit = boxesIn(free, box);
    nodesFit += fit;
    perNode.push(
      `${name} ${round(Math.max(0, free.cpus))} of ${round(allocatable.cpus)} CPU and ${Math.round(Math.max(0, free.memoryMB)).toLocaleString("en-US")} of ${Math.round(allocatable.memoryMB).toLocaleString("en-US")} MiB free: ${fit}`,
    );
  }
  // Pods of the namespace not yet on a node will take a place somewhere.
  const waiting = input.pods.filter(
    (p) => !p.spec?.nodeName && !ended(p) && p.metadata?.namespace === input.namespace,
  ).length;
  nodesFit = Math.max(0, nodesFit - waiting);
  const seen = input.allNamespaces
    ? "every namespace's Pods counted"
    : `only ${input.namespace}'s Pods counted (drydock may not list Pods in other namespaces; give it list of pods cluster-wide to count them)`;
  let fit = nodesFit;
  let why =
    `${plural(fit, "more box")} of ${round(box.cpus)} CPU and ${box.memoryMB.toLocaleString("en-US")} MiB fit on the nodes (` +
    (usable.length ? perNode.join("; ") : "no Ready node takes Pods") +
    `${waiting ? `; ${plural(waiting, "Pod")} of ${input.namespace} waiting for a node` : ""}; requests against allocatable, ${seen})`;
  for (const quota of input.quotas) {
    const room = quotaRoom(quota, box);
    if (room && room.fit < fit) {
      fit = room.fit;
      why = `${plural(fit, "more box")} of ${round(box.cpus)} CPU and ${box.memoryMB.toLocaleString("en-US")} MiB fit, bound by the ResourceQuota ${quota.metadata?.name ?? "?"} of ${input.namespace}: ${room.what}; the nodes would take ${nodesFit}`;
    }
  }
  return { fit, why };
}
