import { describe, expect, it } from "vitest";
import type { ContainerSpec } from "../../../src/engine/container-spec.js";
import { namespaceDenyAll, networkPolicyFor } from "../../../src/engine/kubernetes/network-policy.js";
import { podFor } from "../../../src/engine/kubernetes/pod-manifest.js";
import { LABEL_OWNER, LABEL_SESSION } from "../../../src/engine/labels.js";
import { boxSpec } from "../../../src/sandbox/box-profile.js";
import { InvalidArgumentError } from "../../../src/util/errors.js";
import { KUBERNETES_VERSIONS, schemaErrors } from "../../helpers/kubernetes-schema.js";

const NAMESPACE = "drydock-boxes";
const POD_UID = "0b9d6c1e-2f4a-4e8b-a1c3-7d5e9f2b4a60";

function sessionSpec(overrides: Partial<ContainerSpec> = {}): ContainerSpec {
  const spec = boxSpec(
    {
      image: "drydock-sandbox:3f2a9c1d",
      labels: { [LABEL_SESSION]: "3f2a9c1d0e4b", [LABEL_OWNER]: "build-host/4242/918273" },
    },
    "drydock-3f2a9c1d0e4b",
  );
  return { ...spec, ...overrides };
}

describe("networkPolicyFor", () => {
  for (const version of KUBERNETES_VERSIONS) {
    it(`makes NetworkPolicies the Kubernetes ${version} API schema accepts`, () => {
      expect(
        schemaErrors("NetworkPolicy", version, networkPolicyFor(sessionSpec(), { namespace: NAMESPACE })),
      ).toEqual([]);
      expect(schemaErrors("NetworkPolicy", version, namespaceDenyAll(NAMESPACE))).toEqual([]);
      const owned = networkPolicyFor(sessionSpec(), {
        namespace: NAMESPACE,
        pod: { name: "drydock-3f2a9c1d0e4b", uid: POD_UID },
      });
      expect(schemaErrors("NetworkPolicy", version, owned)).toEqual([]);
    });

    it(`fails the ${version} schema once a field has the wrong type or name`, () => {
      const policy = networkPolicyFor(sessionSpec(), { namespace: NAMESPACE });
      const textTypes = structuredClone(policy) as unknown as { spec: { policyTypes: unknown } };
      textTypes.spec.policyTypes = "Egress";
      expect(schemaErrors("NetworkPolicy", version, textTypes).join("\n")).toMatch(
        /policyTypes must be array/,
      );
      const misspelt = structuredClone(policy) as unknown as {
        spec: { podSelector: Record<string, unknown> };
      };
      misspelt.spec.podSelector.matchLabel = { a: "b" };
      expect(schemaErrors("NetworkPolicy", version, misspelt).join("\n")).toMatch(/additional properties/);
    });
  }

  it("selects the box's Pod and allows nothing in or out of it", () => {
    const spec = sessionSpec();
    const policy = networkPolicyFor(spec, { namespace: NAMESPACE });
    const pod = podFor(spec, { namespace: NAMESPACE });
    expect(policy.metadata.namespace).toBe(pod.metadata.namespace);
    const selector = policy.spec.podSelector.matchLabels ?? {};
    expect(Object.keys(selector)).toEqual([LABEL_SESSION]);
    for (const [key, value] of Object.entries(selector)) expect(pod.metadata.labels[key]).toBe(value);
    // Another session's Pod is not selected.
    const other = podFor(
      sessionSpec({ name: "drydock-0000aaaa1111", labels: { [LABEL_SESSION]: "0000aaaa1111" } }),
      {
        namespace: NAMESPACE,
      },
    );
    expect(other.metadata.labels[LABEL_SESSION]).not.toBe(selector[LABEL_SESSION]);
    expect(policy.spec.policyTypes).toEqual(["Ingress", "Egress"]);
    expect(policy.spec.ingress).toEqual([]);
    expect(policy.spec.egress).toEqual([]);
  });

  it("is owned by the box's Pod when given it, so it goes with the Pod", () => {
    const spec = sessionSpec();
    const pod = { name: "drydock-3f2a9c1d0e4b", uid: POD_UID };
    const policy = networkPolicyFor(spec, { namespace: NAMESPACE, pod });
    expect(policy.metadata.ownerReferences).toEqual([{ apiVersion: "v1", kind: "Pod", ...pod }]);
    expect(networkPolicyFor(spec, { namespace: NAMESPACE }).metadata.ownerReferences).toBeUndefined();
  });

  it("gives the namespace a default that selects every pod in it and allows nothing", () => {
    const policy = namespaceDenyAll(NAMESPACE);
    expect(policy.spec.podSelector).toEqual({});
    expect(policy.spec.policyTypes).toEqual(["Ingress", "Egress"]);
    expect(policy.spec.ingress).toEqual([]);
    expect(policy.spec.egress).toEqual([]);
  });

  it("refuses a box it cannot select or cut off, naming the field", () => {
    const refusal = (run: () => unknown) => {
      try {
        run();
      } catch (error) {
        expect(error).toBeInstanceOf(InvalidArgumentError);
        return (error as Error).message;
      }
      throw new Error("accepted");
    };
    expect(refusal(() => networkPolicyFor(sessionSpec({ labels: {} }), { namespace: NAMESPACE }))).toMatch(
      /^labels\.drydock\.session: /,
    );
    expect(
      refusal(() => networkPolicyFor(sessionSpec({ network: "bridge" }), { namespace: NAMESPACE })),
    ).toMatch(/^network: /);
    expect(refusal(() => namespaceDenyAll("Not A Namespace"))).toMatch(/^namespace: /);
  });
});
