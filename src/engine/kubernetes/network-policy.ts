/**
 * A box's network as Kubernetes NetworkPolicies (networking.k8s.io/v1). Docker's "none" leaves a
 * box with a loopback only; a Pod always has an interface and an address, so "none" becomes a
 * policy that selects the box and allows nothing in either direction. Two of them: one for the
 * whole namespace, made once before any box (a plugin may start a Pod before it has handled a
 * policy made with it, and the namespace's is long handled by then), and one per box that says
 * so of that box alone and goes with it. Either holds only where the cluster's network plugin
 * enforces NetworkPolicy (Calico, Cilium and others do; some plugins ignore policies silently).
 */
import { InvalidArgumentError } from "../../util/errors.js";
import type { ContainerSpec } from "../container-spec.js";
import { LABEL_SESSION } from "../labels.js";
import { checkNamespace, labelSelectorValue, metadataFor, type ObjectMeta } from "./kubernetes-metadata.js";

export interface NetworkPolicy {
  apiVersion: "networking.k8s.io/v1";
  kind: "NetworkPolicy";
  metadata: ObjectMeta;
  spec: {
    podSelector: { matchLabels?: Record<string, string> };
    policyTypes: Array<"Ingress" | "Egress">;
    ingress: [];
    egress: [];
  };
}

function denyAll(metadata: ObjectMeta, matchLabels: Record<string, string> | undefined): NetworkPolicy {
  return {
    apiVersion: "networking.k8s.io/v1",
    kind: "NetworkPolicy",
    metadata,
    spec: {
      // An empty selector selects every pod in the namespace.
      podSelector: matchLabels ? { matchLabels } : {},
      // Both types listed with no rules: nothing comes in and nothing goes out.
      policyTypes: ["Ingress", "Egress"],
      ingress: [],
      egress: [],
    },
  };
}

/**
 * The policy that cuts one box off: it selects the box's Pod by its session label. Given the Pod
 * as made (its uid), the policy is owned by it and goes when the Pod does.
 */
export function networkPolicyFor(
  spec: ContainerSpec,
  options: { namespace: string; pod?: { name: string; uid: string } },
): NetworkPolicy {
  if (spec.network !== "none") {
    throw new InvalidArgumentError(
      "network",
      `"${spec.network}" is a Docker network; on Kubernetes a box has no network ("none")`,
    );
  }
  const session = spec.labels[LABEL_SESSION];
  if (!session) {
    throw new InvalidArgumentError(
      `labels.${LABEL_SESSION}`,
      "a box needs its session label: the policy selects the box's Pod by it",
    );
  }
  const metadata = metadataFor(spec.name ?? "", options.namespace, { [LABEL_SESSION]: session });
  if (options.pod) metadata.ownerReferences = [{ apiVersion: "v1", kind: "Pod", ...options.pod }];
  return denyAll(metadata, { [LABEL_SESSION]: labelSelectorValue(session) });
}

/** The namespace's default: no pod in it may send or receive anything until a policy allows it. */
export function namespaceDenyAll(namespace: string): NetworkPolicy {
  return denyAll({ name: "drydock-deny-all", namespace: checkNamespace(namespace), labels: {} }, undefined);
}
