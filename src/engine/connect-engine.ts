/**
 * The backend an `--engine` value names: a Docker engine (`unix://…`, `tcp://…`, or DOCKER_HOST
 * when none is given) or a Kubernetes namespace (`kubernetes:…`, kubernetes-target.ts).
 */
import type { BoxSize, ClusterRoom } from "./kubernetes/cluster-room.js";
import type { BoxEngine } from "./box-engine.js";
import { Engine } from "./engine.js";
import { DrydockError } from "../util/errors.js";
import { isKubernetesTarget, parseKubernetesTarget } from "./kubernetes/kubernetes-target.js";

/**
 * The Kubernetes backend, loaded when one is named: its client library is most of what every
 * command and server would otherwise load at start (about a second of a CLI's start on two busy
 * cores), and most of an install (57 MB), so the package names it as an optional peer: installed
 * only by those who use a cluster.
 */
export async function kubernetesBackend(): Promise<typeof import("./kubernetes/kubernetes-engine.js")> {
  try {
    return await import("./kubernetes/kubernetes-engine.js");
  } catch (error) {
    if (!missingKubernetesClient(error)) throw error;
    throw new DrydockError(
      "kubernetes_client_missing",
      `the Kubernetes backend needs the package @kubernetes/client-node ${KUBERNETES_CLIENT_VERSION} beside drydock, which installs it only on request: run \`npm install -g @kubernetes/client-node@${KUBERNETES_CLIENT_VERSION}\` for a global drydock, or \`npm install @kubernetes/client-node@${KUBERNETES_CLIENT_VERSION}\` in the project that holds it`,
      { cause: error },
    );
  }
}

/** The client version drydock is built and tested with (package.json's peer dependency). */
export const KUBERNETES_CLIENT_VERSION = "1.4.0";

/** A failed import of the backend because its client library is not installed. */
export function missingKubernetesClient(error: unknown): boolean {
  const e = error as { code?: string; message?: string };
  return e?.code === "ERR_MODULE_NOT_FOUND" && /'@kubernetes\/client-node'/.test(e.message ?? "");
}

export const ENGINE_HELP =
  "where boxes run: a Docker engine (unix:///var/run/docker.sock, tcp://HOST:PORT; default DOCKER_HOST) or a Kubernetes namespace (kubernetes:NAMESPACE?context=NAME&kubeconfig=PATH&apparmor=off; see docs/kubernetes.md)";

/** Connects to the backend `url` names; a Docker engine by default. */
export async function connectEngine(
  url?: string,
  options: { tlsDir?: string; field?: string } = {},
): Promise<BoxEngine> {
  if (url && isKubernetesTarget(url)) {
    const target = parseKubernetesTarget(url, options.field);
    const { KubernetesEngine } = await kubernetesBackend();
    return KubernetesEngine.connect(target, {
      appArmor: target.appArmor,
      loadImage: target.loadImage,
      pullSecrets: target.pullSecrets,
    });
  }
  return Engine.connect({ url, tlsDir: options.tlsDir });
}

/** The Docker engine behind a backend, or undefined for one that is not Docker. */
export function dockerEngine(engine: BoxEngine): Engine | undefined {
  return engine instanceof Engine ? engine : undefined;
}

/**
 * A cluster backend's count of the room for more boxes (KubernetesEngine.room), undefined on
 * Docker. Read by shape: the Kubernetes module is loaded only when a cluster is named.
 */
export function roomOf(engine: BoxEngine): ((box: BoxSize) => Promise<ClusterRoom>) | undefined {
  const room = (engine as { room?: (box: BoxSize) => Promise<ClusterRoom> }).room;
  return typeof room === "function" ? room.bind(engine) : undefined;
}

/** Releases what a backend holds (a Kubernetes backend's Lease, which deletes its boxes left). */
export async function closeEngine(engine: BoxEngine): Promise<void> {
  if (engine instanceof Engine) return;
  // Loaded already: only a Kubernetes backend is not a Docker engine.
  const { KubernetesEngine } = await kubernetesBackend();
  if (engine instanceof KubernetesEngine) await engine.close();
}
