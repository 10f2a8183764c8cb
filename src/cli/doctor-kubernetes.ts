/**
 * `drydock doctor --engine kubernetes:…`: what a cluster namespace must give drydock before a
 * session starts there. The API answers and the namespace exists; this client may do what the
 * backend does (pods, pods/exec, networkpolicies and leases in the namespace; nodes and
 * RuntimeClasses read); which RuntimeClasses there are; the image is on every Ready node (or a
 * loader will put it there); every node caps a Pod's processes (the kubelet's podPidsLimit, read
 * from its configz); and the network holds a box in, by the probe the backend runs before its
 * first box (network-probe.ts), run afresh here. The permissions are asked first, from the
 * kubeconfig alone, so a client that may not connect still learns each permission it lacks.
 */
import { AuthorizationV1Api, CoreV1Api, KubeConfig } from "@kubernetes/client-node";
import { apiMessage } from "../engine/kubernetes/kube-api-error.js";
import { KubernetesEngine } from "../engine/kubernetes/kubernetes-engine.js";
import { parseKubernetesTarget } from "../engine/kubernetes/kubernetes-target.js";
import { ENFORCEMENT_FIX } from "../engine/kubernetes/network-probe.js";
import { boxSpec } from "../sandbox/box-profile.js";
import { clusterSandboxImage } from "../sandbox/sandbox-image.js";
import { describeError } from "../util/errors.js";

export interface KubeCheck {
  name: string;
  ok: boolean;
  detail: string;
  fix?: string;
}

/** One permission drydock uses, as SelfSubjectAccessReview asks it, and what needs it. */
interface Permission {
  verb: string;
  resource: string;
  group: string;
  subresource?: string;
  /** Cluster-scoped (the ClusterRole); else in the box namespace (the Role). */
  cluster?: boolean;
  why: string;
}

/**
 * Every permission connect, sessions and the isolation probe use: the Role and ClusterRole of
 * docs/kubernetes.md grant exactly these (test/kubernetes/rbac.test.ts binds those two and no more).
 */
export const PERMISSIONS: readonly Permission[] = [
  { verb: "create", resource: "pods", group: "", why: "a box is a Pod" },
  { verb: "get", resource: "pods", group: "", why: "waiting for a box to run" },
  { verb: "list", resource: "pods", group: "", why: "finding boxes by label" },
  { verb: "delete", resource: "pods", group: "", why: "removing a box" },
  {
    verb: "list",
    resource: "resourcequotas",
    group: "",
    why: "admission: the room the namespace's quotas leave",
  },
  { verb: "create", resource: "pods", group: "", subresource: "exec", why: "every program in a box" },
  { verb: "get", resource: "pods", group: "", subresource: "exec", why: "the exec WebSocket's upgrade" },
  {
    verb: "get",
    resource: "networkpolicies",
    group: "networking.k8s.io",
    why: "finding the deny-all policy",
  },
  { verb: "create", resource: "networkpolicies", group: "networking.k8s.io", why: "each box's policy" },
  { verb: "create", resource: "leases", group: "coordination.k8s.io", why: "this drydock's Lease" },
  { verb: "list", resource: "leases", group: "coordination.k8s.io", why: "finding dead drydocks' Leases" },
  { verb: "patch", resource: "leases", group: "coordination.k8s.io", why: "renewing the Lease" },
  { verb: "delete", resource: "leases", group: "coordination.k8s.io", why: "ending a Lease and its boxes" },
  { verb: "list", resource: "nodes", group: "", cluster: true, why: "capacity and images on the nodes" },
  {
    verb: "list",
    resource: "runtimeclasses",
    group: "node.k8s.io",
    cluster: true,
    why: "--runtime runsc (gVisor)",
  },
];

function kubeConfigOf(target: ReturnType<typeof parseKubernetesTarget>): KubeConfig {
  const kc = new KubeConfig();
  if (target.kubeconfig) kc.loadFromFile(target.kubeconfig);
  else kc.loadFromDefault();
  if (target.context) kc.setCurrentContext(target.context);
  return kc;
}

async function permissionCheck(kc: KubeConfig, namespace: string): Promise<KubeCheck> {
  const auth = kc.makeApiClient(AuthorizationV1Api);
  const denied: string[] = [];
  for (const p of PERMISSIONS) {
    const review = await auth.createSelfSubjectAccessReview({
      body: {
        spec: {
          resourceAttributes: {
            verb: p.verb,
            resource: p.resource,
            group: p.group,
            ...(p.subresource ? { subresource: p.subresource } : {}),
            ...(p.cluster ? {} : { namespace }),
          },
        },
      },
    });
    if (!review.status?.allowed) {
      const resource = `${p.resource}${p.subresource ? `/${p.subresource}` : ""}${p.group ? ` (${p.group})` : ""}`;
      denied.push(`${p.verb} ${resource} ${p.cluster ? "cluster-wide" : `in ${namespace}`}: ${p.why}`);
    }
  }
  return denied.length === 0
    ? { name: "permissions", ok: true, detail: `all ${PERMISSIONS.length} the backend uses, in ${namespace}` }
    : {
        name: "permissions",
        ok: false,
        detail: `denied: ${denied.join("; ")}`,
        fix: `bind the Role drydock (in ${namespace}) and the ClusterRole drydock-nodes of docs/kubernetes.md ("What the namespace needs") to this client`,
      };
}

async function nodeLimitsCheck(kc: KubeConfig): Promise<KubeCheck> {
  const core = kc.makeApiClient(CoreV1Api);
  const nodes = (await core.listNode()).items.map((n) => n.metadata?.name ?? "");
  const unlimited: string[] = [];
  const limits: string[] = [];
  const unreadable: string[] = [];
  for (const node of nodes) {
    try {
      const raw = (await core.connectGetNodeProxyWithPath({ name: node, path: "configz" })) as unknown;
      const config = (typeof raw === "string" ? JSON.parse(raw) : raw) as {
        kubeletconfig?: { podPidsLimit?: number };
      };
      const pids = config.kubeletconfig?.podPidsLimit;
      if (pids === undefined || pids < 0) unlimited.push(node);
      else limits.push(`${node}: ${pids}`);
    } catch (error) {
      // The API server refuses to proxy to some node addresses (loopback, link-local): unknown, not unlimited.
      unreadable.push(`${node} (${apiMessage(error)})`);
    }
  }
  const known = limits.length ? `podPidsLimit ${limits.join(", ")}` : "";
  const unknown = unreadable.length
    ? `the kubelet's configuration of ${unreadable.join(", ")} cannot be read through the API server: check its podPidsLimit yourself (drydock's boxes need at most 1024)`
    : "";
  return unlimited.length === 0
    ? { name: "node limits", ok: true, detail: [known, unknown].filter(Boolean).join("; ") }
    : {
        name: "node limits",
        ok: false,
        detail: `no per-Pod process limit known on ${unlimited.join(", ")}: a box's processes would be bounded by the node alone`,
        fix: "set podPidsLimit in each kubelet's configuration (drydock's boxes need at most 1024: a gVisor box's host threads)",
      };
}

/** The backend's own probe (network-probe.ts), run afresh: boxes made as a session's are. */
async function isolationCheck(engine: KubernetesEngine, image: string): Promise<KubeCheck> {
  const name = "network isolation";
  try {
    const verdict = await engine.probeIsolation(boxSpec({ image, memoryMB: 256, cpus: 0.25 }, undefined));
    return verdict.isolated
      ? { name, ok: true, detail: verdict.detail }
      : { name, ok: false, detail: verdict.detail, fix: ENFORCEMENT_FIX };
  } catch (error) {
    return { name, ok: false, detail: describeError(error) };
  }
}

export async function kubernetesChecks(url: string, image?: string): Promise<KubeCheck[]> {
  const target = parseKubernetesTarget(url);
  const checks: KubeCheck[] = [];
  // Permissions first, from the kubeconfig alone: a client that may not connect learns which it lacks.
  try {
    checks.push(await permissionCheck(kubeConfigOf(target), target.namespace));
  } catch (error) {
    checks.push({
      name: "permissions",
      ok: false,
      detail: `could not ask the API server what this client may do: ${apiMessage(error)}`,
    });
  }
  let engine: KubernetesEngine;
  try {
    engine = await KubernetesEngine.connect(target, {
      appArmor: target.appArmor,
      loadImage: target.loadImage,
    });
  } catch (error) {
    return [
      ...checks,
      {
        name: `engine ${target.name}`,
        ok: false,
        detail: describeError(error),
        fix: "check the kubeconfig, context and namespace (kubectl get ns NAMESPACE with the same kubeconfig)",
      },
    ];
  }
  try {
    const kc = kubeConfigOf(target);
    const total = await engine.totalCapacity();
    const largest = await engine.capacity();
    checks.push({
      name: `engine ${target.name}`,
      ok: total.cpus > 0,
      detail: `${total.cpus} cores, ${total.memoryMB} MiB over the Ready nodes; the largest node ${largest.cpus} cores, ${largest.memoryMB} MiB`,
    });
    const runtimes = (await engine.runtimes()).map((r) => r.name);
    checks.push({
      name: "runtimes",
      ok: true,
      detail: `${runtimes.join(", ")}${runtimes.includes("runsc") ? "" : " (no RuntimeClass with handler runsc: --runtime runsc is refused)"}`,
    });
    const wanted = image ?? (await clusterSandboxImage());
    const present = await engine.hasImage(wanted);
    checks.push({
      name: "image on the nodes",
      ok: present || Boolean(target.loadImage),
      detail: present
        ? wanted
        : target.loadImage
          ? `${wanted} is missing; ${target.loadImage.join(" ")} puts it there at first use`
          : `${wanted} is missing on some Ready node`,
      ...(present || target.loadImage
        ? {}
        : {
            fix: `push it to the nodes' registry, or add load=COMMAND to the engine (the test cluster: scripts/kube/cluster.sh load ${wanted})`,
          }),
    });
    checks.push(await nodeLimitsCheck(kc));
    if (present) checks.push(await isolationCheck(engine, wanted));
  } catch (error) {
    checks.push({ name: `engine ${target.name}`, ok: false, detail: describeError(error) });
  } finally {
    await engine.close();
  }
  return checks;
}
