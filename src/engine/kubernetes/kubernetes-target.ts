/**
 * Where a Kubernetes backend is, as `--engine` gives it: `kubernetes:` then an optional namespace
 * (default drydock-boxes) and optional query words `context=NAME` and `kubeconfig=PATH`
 * (default: KUBECONFIG, else ~/.kube/config, and that file's current context), and `apparmor=off`
 * for nodes without AppArmor (they refuse a Pod that asks for its profile, where Docker on such a
 * host applies none), and `load=COMMAND` for what puts a local image on every node (`kind load
 * docker-image`, the test cluster's `scripts/kube/cluster.sh load`), and `deadline=SECONDS` for the
 * time after which Kubernetes ends each box whatever becomes of drydock (activeDeadlineSeconds),
 * and `probe-image=REF` for the image the NetworkPolicy probe runs (network-probe.ts), and
 * `pull-secret=NAME` (once per secret) for the Secrets the kubelet pulls box images with.
 * Pure.
 *
 *   kubernetes:                              the current context, namespace drydock-boxes
 *   kubernetes:agents                        namespace agents
 *   kubernetes:agents?context=lab&kubeconfig=/etc/drydock/kubeconfig
 */
import { InvalidArgumentError } from "../../util/errors.js";
import { isDnsLabel, isDnsSubdomain } from "./kubernetes-metadata.js";

export const DEFAULT_BOX_NAMESPACE = "drydock-boxes";

export interface KubernetesTarget {
  /** How messages name it: `kubernetes:NAMESPACE`, with the context when one was given. */
  name: string;
  namespace: string;
  context?: string;
  kubeconfig?: string;
  /** false: boxes ask for no AppArmor profile (`apparmor=off`). */
  appArmor?: boolean;
  /** `load=COMMAND`: what puts a local image on every node, run with the image last (no shell). */
  loadImage?: string[];
  /** `deadline=SECONDS`: each box's activeDeadlineSeconds (Kubernetes ends it then); default none. */
  activeDeadlineSeconds?: number;
  /** `probe-image=REF`: the image the NetworkPolicy probe runs (default: the first box's, unless built from a repository). */
  probeImage?: string;
  /** `pull-secret=NAME`, once per Secret: the namespace's Secrets each box's Pod pulls its image with. */
  pullSecrets?: string[];
}

/** The longest deadline taken: a year, far past any session, and well inside the API's int64. */
const MAX_DEADLINE_SECONDS = 366 * 24 * 3600;

const FORMS =
  "write kubernetes:, kubernetes:NAMESPACE, or kubernetes:NAMESPACE?context=NAME&kubeconfig=PATH&apparmor=off&load=COMMAND&deadline=SECONDS&probe-image=REF&pull-secret=NAME";

/** Whether an `--engine` value names a Kubernetes backend rather than a Docker engine. */
export function isKubernetesTarget(url: string): boolean {
  return /^(kubernetes|k8s):/.test(url);
}

/** Parses `kubernetes:[NAMESPACE][?context=NAME&kubeconfig=PATH]` (`k8s:` is the same). */
export function parseKubernetesTarget(url: string, field = "--engine"): KubernetesTarget {
  const match = /^(?:kubernetes|k8s):([^?]*)(?:\?(.*))?$/s.exec(url);
  if (!match)
    throw new InvalidArgumentError(field, `${JSON.stringify(url)} is not a Kubernetes target; ${FORMS}`);
  const namespace = match[1] || DEFAULT_BOX_NAMESPACE;
  if (!isDnsLabel(namespace)) {
    throw new InvalidArgumentError(
      field,
      `${JSON.stringify(namespace)} is not a namespace name (lowercase letters, digits and '-', at most 63); ${FORMS}`,
    );
  }
  const target: KubernetesTarget = { name: `kubernetes:${namespace}`, namespace };
  for (const pair of (match[2] ?? "").split("&").filter(Boolean)) {
    const eq = pair.indexOf("=");
    const key = eq < 0 ? pair : pair.slice(0, eq);
    let value: string;
    try {
      value = decodeURIComponent(eq < 0 ? "" : pair.slice(eq + 1));
    } catch {
      throw new InvalidArgumentError(field, `${url}: ${key} has a malformed %-escape`);
    }
    if (!value) throw new InvalidArgumentError(field, `${url}: ${key} needs a value; ${FORMS}`);
    if (/[\0\n\r]/.test(value))
      throw new InvalidArgumentError(field, `${url}: ${key} holds a control character`);
    if (key === "context") target.context = value;
    else if (key === "kubeconfig") target.kubeconfig = value;
    else if (key === "apparmor" && (value === "off" || value === "on")) target.appArmor = value === "on";
    else if (key === "load") target.loadImage = value.split(/\s+/).filter(Boolean);
    else if (key === "probe-image") target.probeImage = value;
    else if (key === "pull-secret") {
      if (!isDnsSubdomain(value)) {
        throw new InvalidArgumentError(
          field,
          `${url}: pull-secret takes the name of a Secret in the namespace (lowercase letters, digits, '-' and '.'); got ${JSON.stringify(value)}`,
        );
      }
      target.pullSecrets = [...(target.pullSecrets ?? []), value];
    } else if (key === "deadline") {
      if (!/^[1-9]\d{0,8}$/.test(value) || Number(value) > MAX_DEADLINE_SECONDS) {
        throw new InvalidArgumentError(
          field,
          `${url}: deadline takes whole seconds from 1 to ${MAX_DEADLINE_SECONDS} (a year), the time after which Kubernetes ends each box; got ${JSON.stringify(value)}`,
        );
      }
      target.activeDeadlineSeconds = Number(value);
    } else if (key === "apparmor") throw new InvalidArgumentError(field, `${url}: apparmor takes on or off`);
    else throw new InvalidArgumentError(field, `${url}: unknown word ${JSON.stringify(key)}; ${FORMS}`);
  }
  if (target.context) target.name += `?context=${target.context}`;
  return target;
}
