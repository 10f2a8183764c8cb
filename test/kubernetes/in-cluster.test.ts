/**
 * drydock as a Pod in the cluster, from deploy/kubernetes/drydock.yaml as a user applies it: its
 * server image (`drydock image build --server`) and a box image pushed with `drydock image push`
 * to a registry on 127.0.0.1, both named by digest; its ServiceAccount bound only to the
 * manifest's Role and ClusterRole (the documented ones); the boxes' namespace enforcing Pod
 * Security `restricted`. An MCP client outside the cluster reaches it over Streamable HTTP with
 * the bearer token, and its sessions run as Pods on both nodes, none with a host path.
 *
 * What the test cluster makes the test change, and nothing else: the namespaces' names (its own),
 * and, because this cluster has no kube-proxy, no DNS and drops pod traffic at the node, the
 * server's Pod runs on the node's network (hostNetwork, so the server namespace cannot enforce
 * `restricted`), reaches the API at 127.0.0.1:6443, listens on a free port and accepts the Host
 * 127.0.0.1:PORT the client names.
 */
import { randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import {
  CoreV1Api,
  KubernetesObjectApi,
  RbacAuthorizationV1Api,
  type KubernetesObject,
} from "@kubernetes/client-node";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { describe, expect, it } from "vitest";
import { parseAllDocuments } from "yaml";
import { Engine } from "../../src/engine/engine.js";
import { pushImage } from "../../src/engine/image-push.js";
import { buildServerImage } from "../../src/sandbox/server-image.js";
import { kubeConfig } from "../helpers/kube.js";
import { LoopbackRegistry } from "../helpers/loopback-registry.js";
import { ok } from "../helpers/mcp-client.js";
import { pushedBoxImage } from "../helpers/registry-images.js";
import { sandboxImage } from "../helpers/sessions.js";
import { freePort } from "../helpers/ports.js";

const run = randomBytes(4).toString("hex");

type Obj = KubernetesObject & Record<string, unknown> & { metadata: { name: string; namespace?: string } };
interface PodTemplate {
  spec: {
    hostNetwork?: boolean;
    containers: Array<{ args: string[]; env: Array<Record<string, unknown>> }>;
  };
}

/** The manifest with this test's names, images and the test cluster's network changes. */
function manifestFor(options: {
  server: string;
  boxes: string;
  serverImage: string;
  boxImage: string;
  port: number;
}): Obj[] {
  let text = readFileSync(join(process.cwd(), "deploy", "kubernetes", "drydock.yaml"), "utf8");
  text = text
    .replaceAll("DRYDOCK_SERVER_IMAGE", options.serverImage)
    .replaceAll("DRYDOCK_SANDBOX_IMAGE", options.boxImage)
    .replaceAll("drydock-boxes", options.boxes)
    .replaceAll("namespace: drydock}", `namespace: ${options.server}}`)
    .replaceAll("drydock-nodes", `drydock-nodes-${options.server}`)
    .replace(/^ {2}name: drydock$/m, `  name: ${options.server}`);
  const objects = parseAllDocuments(text).map((d) => d.toJS() as Obj);
  for (const o of objects) {
    if (o.kind === "Namespace" && o.metadata.name === options.server) {
      delete (o.metadata as { labels?: object }).labels;
    }
    if (o.kind === "Deployment") {
      const pod = (o.spec as { template: PodTemplate }).template;
      pod.spec.hostNetwork = true;
      const container = pod.spec.containers[0]!;
      container.args = container.args.map((a) =>
        a === "--port=8765" ? `--port=${options.port}` : a.startsWith("--engine=") ? `${a}?apparmor=off` : a,
      );
      // The client outside reaches it on the node's loopback: a Host it names.
      container.args.push(`--allow-host=127.0.0.1:${options.port}`);
      (container as { ports?: unknown }).ports = [{ name: "mcp", containerPort: options.port }];
      container.env.push(
        { name: "KUBERNETES_SERVICE_HOST", value: "127.0.0.1" },
        { name: "KUBERNETES_SERVICE_PORT", value: "6443" },
      );
    }
  }
  return objects;
}

describe("drydock in the cluster", () => {
  it("serves an outside MCP client from a Pod, as the documented Role, its boxes on both nodes from the registry", async () => {
    const docker = await Engine.connect();
    await using registry = await LoopbackRegistry.start();
    const serverImage = await pushImage(
      docker,
      await buildServerImage(docker, { onLine: (l) => console.error(`[server image] ${l}`) }),
      `${registry.address}/drydock-server`,
    );
    const marker = `in-cluster-${run}`;
    const boxImage = await pushedBoxImage(docker, sandboxImage(), `${registry.address}/drydock-box`, marker);

    const kc = kubeConfig();
    const core = kc.makeApiClient(CoreV1Api);
    const rbac = kc.makeApiClient(RbacAuthorizationV1Api);
    const objectsApi = KubernetesObjectApi.makeApiClient(kc);
    const server = `drydock-t-srv-${process.pid}`;
    const boxes = `drydock-t-boxes-${process.pid}`;
    const port = await freePort();
    const token = randomBytes(24).toString("hex");
    const objects = manifestFor({
      server,
      boxes,
      serverImage: serverImage.byDigest,
      boxImage: boxImage.byDigest,
      port,
    });
    try {
      for (const o of objects) {
        await objectsApi.create(o);
        if (o.kind === "Namespace" && o.metadata.name === server) {
          await core.createNamespacedSecret({
            namespace: server,
            body: { metadata: { name: "drydock-token" }, stringData: { token } },
          });
        }
      }
      // The server's Pod is ready when it listens.
      let serverPod: string | undefined;
      const until = Date.now() + 300_000;
      for (;;) {
        const pods = (await core.listNamespacedPod({ namespace: server })).items;
        const ready = pods.find((p) =>
          p.status?.conditions?.some((c) => c.type === "Ready" && c.status === "True"),
        );
        if (ready) {
          serverPod = ready.metadata!.name!;
          break;
        }
        if (Date.now() > until) {
          const log = pods[0]
            ? await core
                .readNamespacedPodLog({
                  name: pods[0].metadata!.name!,
                  namespace: server,
                  container: "drydock",
                })
                .catch((e: unknown) => String(e))
            : "no pod";
          throw new Error(
            `the server Pod did not become ready: ${JSON.stringify(pods.map((p) => p.status))}\n${log}`,
          );
        }
        await new Promise((r) => setTimeout(r, 2_000));
      }

      // An outside client: a wrong token is refused, the right one served.
      const url = new URL(`http://127.0.0.1:${port}/mcp`);
      const refused = await fetch(url, { method: "POST", headers: { authorization: "Bearer wrong" } });
      expect(refused.status).toBe(401);
      const client = new Client({ name: "outside", version: "1" });
      await client.connect(
        new StreamableHTTPClientTransport(url, {
          requestInit: { headers: { authorization: `Bearer ${token}` } },
        }),
      );
      try {
        const call = (name: string, args: Record<string, unknown>) =>
          client.callTool({ name, arguments: args }, undefined, { timeout: 400_000 });
        const sessions: string[] = [];
        const nodes = new Set<string>();
        const allNodes = (await core.listNode()).items.map((n) => n.metadata!.name!);
        // Sessions until both nodes hold one (the scheduler spreads them; at most four).
        while (nodes.size < allNodes.length && sessions.length < 4) {
          const created = ok(await call("session_create", {}));
          sessions.push(String(created.session_id));
          const shown = ok(
            await call("bash", { session_id: created.session_id, command: "cat /etc/drydock-marker; id -u" }),
          );
          expect(shown.stdout).toBe(`${marker}\n1000\n`);
          const pod = await core.readNamespacedPod({
            name: `drydock-${String(created.session_id)}`,
            namespace: boxes,
          });
          nodes.add(pod.spec!.nodeName!);
        }
        expect([...nodes].sort()).toEqual(allNodes.sort());

        // Every Pod of both namespaces: images by digest from the registry, no host path.
        const boxPods = (await core.listNamespacedPod({ namespace: boxes })).items;
        const serverPods = (await core.listNamespacedPod({ namespace: server })).items;
        expect(boxPods.length).toBeGreaterThanOrEqual(sessions.length);
        for (const pod of [...boxPods, ...serverPods]) {
          for (const c of [...(pod.spec?.initContainers ?? []), ...(pod.spec?.containers ?? [])]) {
            expect(c.image, pod.metadata?.name).toMatch(
              new RegExp(`^${registry.address}/drydock-(box|server)@sha256:[a-f0-9]{64}$`),
            );
          }
          expect(
            (pod.spec?.volumes ?? []).filter((v) => v.hostPath),
            pod.metadata?.name,
          ).toEqual([]);
        }
        expect(serverPods.map((p) => p.metadata?.name)).toContain(serverPod);
        // The server ran as the ServiceAccount of the manifest, bound to nothing but its roles.
        expect(serverPods[0]!.spec?.serviceAccountName).toBe("drydock");

        for (const id of sessions) ok(await call("session_destroy", { session_id: id }));
      } finally {
        await client.close();
      }
    } finally {
      await core.deleteNamespace({ name: server, gracePeriodSeconds: 0 }).catch(() => undefined);
      await core.deleteNamespace({ name: boxes, gracePeriodSeconds: 0 }).catch(() => undefined);
      await rbac.deleteClusterRoleBinding({ name: `drydock-nodes-${server}` }).catch(() => undefined);
      await rbac.deleteClusterRole({ name: `drydock-nodes-${server}` }).catch(() => undefined);
    }
  }, 1_500_000);
});
