/**
 * deploy/kubernetes/drydock.yaml, read as Kubernetes reads it: the RBAC it binds is exactly the
 * Role and ClusterRole docs/kubernetes.md gives (the ones the non-admin test binds), and nothing
 * in it needs the node or privilege (Pod Security `restricted`, which both its namespaces
 * enforce; the cluster test applies it for real).
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { parseAllDocuments } from "yaml";
import { documentedRbac } from "../../helpers/kube-rbac.js";

interface Obj {
  kind: string;
  metadata: { name: string; namespace?: string; labels?: Record<string, string> };
  [key: string]: unknown;
}

const objects = parseAllDocuments(
  readFileSync(join(process.cwd(), "deploy", "kubernetes", "drydock.yaml"), "utf8"),
).map((d) => {
  expect(d.errors).toEqual([]);
  return d.toJS() as Obj;
});
const find = (kind: string) => objects.find((o) => o.kind === kind)!;

describe("the Kubernetes manifests", () => {
  it("bind exactly the documented Role and ClusterRole to the server's ServiceAccount", () => {
    const { role, clusterRole } = documentedRbac();
    expect(find("Role").rules).toEqual(role.rules);
    expect(find("Role").metadata.namespace).toBe("drydock-boxes");
    expect(find("ClusterRole").rules).toEqual(clusterRole.rules);
    for (const binding of [find("RoleBinding"), find("ClusterRoleBinding")]) {
      expect(binding.subjects).toEqual([{ kind: "ServiceAccount", name: "drydock", namespace: "drydock" }]);
    }
  });

  it("enforce Pod Security restricted on both namespaces, and the server's Pod asks for nothing it refuses", () => {
    for (const ns of objects.filter((o) => o.kind === "Namespace")) {
      expect(ns.metadata.labels?.["pod-security.kubernetes.io/enforce"]).toBe("restricted");
    }
    const pod = (find("Deployment").spec as { template: { spec: Record<string, unknown> } }).template.spec;
    const text = JSON.stringify(pod);
    for (const needsNode of ["hostPath", "hostNetwork", "hostPID", "hostIPC", "privileged", "hostPort"]) {
      expect(text).not.toContain(needsNode);
    }
    expect(pod.securityContext).toMatchObject({
      runAsNonRoot: true,
      seccompProfile: { type: "RuntimeDefault" },
    });
    const containers = [...(pod.initContainers as object[]), ...(pod.containers as object[])] as Array<{
      securityContext: Record<string, unknown>;
      image: string;
    }>;
    for (const c of containers) {
      expect(c.securityContext).toMatchObject({
        allowPrivilegeEscalation: false,
        capabilities: { drop: ["ALL"] },
      });
      expect(c.image).toBe("DRYDOCK_SERVER_IMAGE");
    }
    for (const volume of pod.volumes as Array<Record<string, unknown>>) {
      expect(Object.keys(volume).sort()).toEqual(["emptyDir", "name"]);
    }
  });

  it("serve on the Service's name with the sandbox image named once, and take the token from a Secret", () => {
    const container = (
      find("Deployment").spec as {
        template: { spec: { containers: Array<{ args: string[]; env: Array<Record<string, unknown>> }> } };
      }
    ).template.spec.containers[0]!;
    expect(container.args).toContain("--allow-host=drydock.drydock.svc:8765");
    expect(container.args).toContain("--engine=kubernetes:drydock-boxes");
    expect(container.args.filter((a) => a.startsWith("--image="))).toEqual(["--image=DRYDOCK_SANDBOX_IMAGE"]);
    expect(container.env).toEqual([
      { name: "DRYDOCK_TOKEN", valueFrom: { secretKeyRef: { name: "drydock-token", key: "token" } } },
    ]);
    expect(find("Service").spec).toMatchObject({ ports: [{ port: 8765, targetPort: "mcp" }] });
  });
});
