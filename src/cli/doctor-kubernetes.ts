/**
 * `drydock doctor --engine kubernetes:…`: what a cluster namespace must give drydock before a
 * session starts there. The API answers and the namespace exists; this client may do what the
 * backend does (pods, pods/exec, networkpolicies and leases in the namespace; nodes and
 * RuntimeClasses read); which RuntimeClasses there are; the image is on every Ready node (or a
 * loader will put it there); every node caps a Pod's processes (the kubelet's podPidsLimit, read
 * from its configz); and the network holds a box in: a probe box that listens is not reached by
 * another probe box (a network plugin that ignores NetworkPolicy fails this).
 */
import { AuthorizationV1Api, CoreV1Api, KubeConfig } from "@kubernetes/client-node";
import { KubernetesEngine } from "../engine/kubernetes/kubernetes-engine.js";
import { parseKubernetesTarget } from "../engine/kubernetes/kubernetes-target.js";
import { Box } from "../sandbox/box.js";
import { clusterSandboxImage } from "../sandbox/sandbox-image.js";
import { describeError } from "../util/errors.js";

export interface KubeCheck {
  name: string;
  ok: boolean;
  detail: string;
  fix?: string;
}

/** What the backend does, as SelfSubjectAccessReview asks it: [verb, resource, group, subresource?, cluster-wide?]. */
const PERMISSIONS: Array<[string, string, string, string?, boolean?]> = [
  ["create", "pods", ""],
  ["get", "pods", ""],
  ["list", "pods", ""],
  ["delete", "pods", ""],
  ["create", "pods", "", "exec"],
  ["get", "pods", "", "exec"],
  ["create", "networkpolicies", "networking.k8s.io"],
  ["get", "networkpolicies", "networking.k8s.io"],
  ["create", "leases", "coordination.k8s.io"],
  ["list", "leases", "coordination.k8s.io"],
  ["patch", "leases", "coordination.k8s.io"],
  ["delete", "leases", "coordination.k8s.io"],
  ["list", "nodes", "", undefined, true],
  ["list", "runtimeclasses", "node.k8s.io", undefined, true],
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
  for (const [verb, resource, group, subresource, clusterWide] of PERMISSIONS) {
    const review = await auth.createSelfSubjectAccessReview({
      body: {
        spec: {
          resourceAttributes: {
            verb,
            resource,
            group,
            ...(subresource ? { subresource } : {}),
            ...(clusterWide ? {} : { namespace }),
          },
        },
      },
    });
    if (!review.status?.allowed) denied.push(`${verb} ${resource}${subresource ? `/${subresource}` : ""}`);
  }
  return denied.length === 0
    ? { name: "permissions", ok: true, detail: `all ${PERMISSIONS.length} the backend uses, in ${namespace}` }
    : {
        name: "permissions",
        ok: false,
        detail: `denied: ${denied.join(", ")}`,
        fix: `bind a Role in ${namespace} (pods, pods/exec, networkpolicies, leases) and a ClusterRole (get/list nodes and runtimeclasses) to this client; docs/kubernetes.md has both`,
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
      const body = (error as { body?: unknown }).body;
      const said = typeof body === "string" ? /"message":"([^"]*)"/.exec(body)?.[1] : undefined;
      unreadable.push(`${node} (${said ?? describeError(error).split("\n")[0]})`);
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

/** Two probe boxes: the second must not reach the first's listener, which the first itself reaches. */
async function isolationCheck(engine: KubernetesEngine, image: string): Promise<KubeCheck> {
  const name = "network isolation";
  const boxes: Box[] = [];
  try {
    const tag = `doctor-${process.pid.toString(36)}`;
    const [listener, prober] = await Promise.all(
      ["l", "p"].map((side) =>
        Box.create(engine, `${tag}-${side}`, { image, runtime: "runc", memoryMB: 256, cpus: 0.25 }),
      ),
    );
    boxes.push(listener!, prober!);
    void listener!
      .sh("python3 -m http.server 8000 --bind 0.0.0.0 >/dev/null 2>&1", [], { timeoutMs: 60_000 })
      .catch(() => undefined);
    const probe = (box: Box, host: string) =>
      box
        .sh(
          `python3 -c "import socket; s=socket.socket(); s.settimeout(3); s.connect(('$1', 8000)); print('open')" 2>/dev/null || echo closed`,
          [host],
          { timeoutMs: 30_000 },
        )
        .then((r) => r.stdout.toString().trim());
    let self = "closed";
    for (let i = 0; i < 20 && self !== "open"; i++) {
      self = await probe(listener!, "127.0.0.1");
      if (self !== "open") await new Promise((resolve) => setTimeout(resolve, 500));
    }
    const ip = (await engine.podIp(listener!.id)) ?? "";
    if (self !== "open" || !ip)
      return { name, ok: false, detail: "the probe box's listener did not start; cannot tell" };
    const reached = await probe(prober!, ip);
    return reached === "open"
      ? {
          name,
          ok: false,
          detail: `a box reached another box's listener at ${ip}:8000: the network plugin does not enforce NetworkPolicy`,
          fix: "use a network plugin that enforces NetworkPolicy (Calico, Cilium, kube-network-policies), or a node firewall that drops what pods send",
        }
      : { name, ok: true, detail: `a box did not reach another box's listener at ${ip}:8000` };
  } catch (error) {
    return { name, ok: false, detail: describeError(error) };
  } finally {
    await Promise.allSettled(boxes.map((b) => b.remove()));
  }
}

export async function kubernetesChecks(url: string, image?: string): Promise<KubeCheck[]> {
  const target = parseKubernetesTarget(url);
  const checks: KubeCheck[] = [];
  let engine: KubernetesEngine;
  try {
    engine = await KubernetesEngine.connect(target, {
      appArmor: target.appArmor,
      loadImage: target.loadImage,
    });
  } catch (error) {
    return [
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
    checks.push(await permissionCheck(kc, target.namespace));
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
