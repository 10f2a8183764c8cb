/**
 * A non-admin identity on the test cluster: a ServiceAccount bound only to the Role and ClusterRole
 * docs/kubernetes.md gives (read from the page, so what is documented is what is tested), and a
 * kubeconfig that authenticates as it with a token the API server issued for it.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { CoreV1Api, RbacAuthorizationV1Api, type V1ClusterRole, type V1Role } from "@kubernetes/client-node";
import { parseAllDocuments, stringify } from "yaml";
import { kubeConfig } from "./kube.js";

/** The Role and ClusterRole of docs/kubernetes.md's "What the namespace needs". */
export function documentedRbac(): { role: V1Role; clusterRole: V1ClusterRole } {
  const page = readFileSync(join(process.cwd(), "docs", "kubernetes.md"), "utf8");
  const section = page.slice(
    page.indexOf("### What the namespace needs"),
    page.indexOf("### What differs from Docker"),
  );
  const objects = [...section.matchAll(/```yaml\n([\s\S]*?)```/g)].flatMap((m) =>
    parseAllDocuments(m[1]!).map((d) => d.toJS() as { kind: string }),
  );
  const role = objects.find((o) => o.kind === "Role") as V1Role | undefined;
  const clusterRole = objects.find((o) => o.kind === "ClusterRole") as V1ClusterRole | undefined;
  if (!role || !clusterRole)
    throw new Error("docs/kubernetes.md: no Role and ClusterRole in 'What the namespace needs'");
  return { role, clusterRole };
}

export interface BoundIdentity extends AsyncDisposable {
  /** system:serviceaccount:NAMESPACE:NAME */
  user: string;
  /** A kubeconfig file that authenticates as the ServiceAccount (nothing else in it). */
  kubeconfig: string;
  /** The `--engine` value for the namespace as this identity. */
  target: string;
}

/**
 * A ServiceAccount in `namespace` bound to the documented Role (with `edit` applied to its rules
 * first, to take a permission away) and ClusterRole, and a kubeconfig in `dir` for it.
 */
export async function boundIdentity(
  namespace: string,
  dir: string,
  edit: (role: V1Role) => V1Role = (r) => r,
): Promise<BoundIdentity> {
  const admin = kubeConfig();
  const core = admin.makeApiClient(CoreV1Api);
  const rbac = admin.makeApiClient(RbacAuthorizationV1Api);
  const { role, clusterRole } = documentedRbac();
  const name = "drydock";
  // The ClusterRole is cluster-scoped: a name of this namespace's own, removed on dispose.
  const clusterName = `${clusterRole.metadata!.name}-${namespace}`;
  await core.createNamespacedServiceAccount({ namespace, body: { metadata: { name } } });
  const ownRole = edit({ ...role, metadata: { ...role.metadata, namespace } });
  await rbac.createNamespacedRole({ namespace, body: ownRole });
  await rbac.createNamespacedRoleBinding({
    namespace,
    body: {
      metadata: { name },
      roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "Role", name: ownRole.metadata!.name! },
      subjects: [{ kind: "ServiceAccount", name, namespace }],
    },
  });
  await rbac.createClusterRole({ body: { ...clusterRole, metadata: { name: clusterName } } });
  await rbac.createClusterRoleBinding({
    body: {
      metadata: { name: clusterName },
      roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: clusterName },
      subjects: [{ kind: "ServiceAccount", name, namespace }],
    },
  });
  const token = await core.createNamespacedServiceAccountToken({
    name,
    namespace,
    body: { spec: { audiences: [], expirationSeconds: 3600 } },
  });
  const cluster = admin.getCurrentCluster()!;
  const kubeconfig = join(dir, `${namespace}.kubeconfig`);
  writeFileSync(
    kubeconfig,
    stringify({
      apiVersion: "v1",
      kind: "Config",
      clusters: [
        {
          name: "test",
          cluster: {
            server: cluster.server,
            ...(cluster.caFile ? { "certificate-authority": cluster.caFile } : {}),
            ...(cluster.caData ? { "certificate-authority-data": cluster.caData } : {}),
          },
        },
      ],
      users: [{ name, user: { token: token.status!.token } }],
      contexts: [{ name: "test", context: { cluster: "test", user: name, namespace } }],
      "current-context": "test",
    }),
    { mode: 0o600 },
  );
  return {
    user: `system:serviceaccount:${namespace}:${name}`,
    kubeconfig,
    target: `kubernetes:${namespace}?kubeconfig=${encodeURIComponent(kubeconfig)}&apparmor=off`,
    async [Symbol.asyncDispose]() {
      await rbac.deleteClusterRoleBinding({ name: clusterName }).catch(() => undefined);
      await rbac.deleteClusterRole({ name: clusterName }).catch(() => undefined);
    },
  };
}
