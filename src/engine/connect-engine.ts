/**
 * The backend an `--engine` value names: a Docker engine (`unix://…`, `tcp://…`, or DOCKER_HOST
 * when none is given) or a Kubernetes namespace (`kubernetes:…`, kubernetes-target.ts).
 */
import type { BoxEngine } from "./box-engine.js";
import { Engine } from "./engine.js";
import { isKubernetesTarget, parseKubernetesTarget } from "./kubernetes/kubernetes-target.js";

/**
 * The Kubernetes backend, loaded when one is named: its client library is most of what every
 * command and server would otherwise load at start (about a second of a CLI's start on two busy cores).
 */
export const kubernetesBackend = () => import("./kubernetes/kubernetes-engine.js");

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
    return KubernetesEngine.connect(target, { appArmor: target.appArmor, loadImage: target.loadImage });
  }
  return Engine.connect({ url, tlsDir: options.tlsDir });
}

/** The Docker engine behind a backend, or undefined for one that is not Docker. */
export function dockerEngine(engine: BoxEngine): Engine | undefined {
  return engine instanceof Engine ? engine : undefined;
}

/** Releases what a backend holds (a Kubernetes backend's Lease, which deletes its boxes left). */
export async function closeEngine(engine: BoxEngine): Promise<void> {
  if (engine instanceof Engine) return;
  // Loaded already: only a Kubernetes backend is not a Docker engine.
  const { KubernetesEngine } = await kubernetesBackend();
  if (engine instanceof KubernetesEngine) await engine.close();
}
