/**
 * Boxes on the cluster whose drydock died: a server killed with SIGKILL leaves its Pods, and the
 * next drydock on the namespace removes them (their owner process is gone); a drydock that died on
 * another machine is told by its Lease, which nobody renews: once it expires the next drydock
 * deletes it, and the cluster's garbage collector deletes every Pod it owned.
 */
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { CoordinationV1Api } from "@kubernetes/client-node";
import { describe, expect, inject, it } from "vitest";
import { reapExpiredLeases, LEASE_LABEL } from "../../src/engine/kubernetes/owner-lease.js";
import { SessionManager } from "../../src/session/session-manager.js";
import { kubeConfig, testNamespace } from "../helpers/kube.js";
import { ok } from "../helpers/mcp-client.js";
import { tempRepo } from "../helpers/repos.js";

const cli = join(process.cwd(), "dist", "cli", "main.js");

describe("reaping on the cluster", () => {
  it("removes the Pods of a server killed with SIGKILL when the next drydock starts", async () => {
    await using ns = await testNamespace("reap");
    using repo = tempRepo();
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [
        cli,
        "serve",
        "--engine",
        ns.target,
        "--repo",
        repo.path,
        "--image",
        inject("sandboxImage"),
        "--pool",
        "0",
      ],
      env: { ...(process.env as Record<string, string>) },
      stderr: "pipe",
    });
    const client = new Client({ name: "reap", version: "1" });
    await client.connect(transport);
    ok(
      await client.callTool({ name: "bash", arguments: { command: "echo hi" } }, undefined, {
        timeout: 240_000,
      }),
    );
    expect(await ns.pods()).toHaveLength(1);
    process.kill(transport.pid!, "SIGKILL");
    await client.close().catch(() => undefined);
    // The Pod outlives its server...
    await new Promise((resolve) => setTimeout(resolve, 2_000));
    expect(await ns.pods()).toHaveLength(1);
    // ...until a drydock starts on the namespace.
    const manager = await SessionManager.start(await ns.engine());
    try {
      await expect.poll(async () => (await ns.pods()).length, { timeout: 60_000 }).toBe(0);
    } finally {
      await manager.closeAll();
    }
  });

  it("deletes an expired owner Lease, and the garbage collector its Pods", async () => {
    await using ns = await testNamespace("lease");
    const engine = await ns.engine();
    const coordination = kubeConfig().makeApiClient(CoordinationV1Api);
    // A Lease as a drydock that died elsewhere left it: last renewed ten minutes ago.
    const old = new Date(Date.now() - 600_000).toISOString().replace(/Z$/, "000Z") as unknown as Date;
    const lease = await coordination.createNamespacedLease({
      namespace: ns.name,
      body: {
        metadata: { name: "drydock-owner-elsewhere", labels: { [LEASE_LABEL]: "1" } },
        spec: { holderIdentity: "far/1/1", leaseDurationSeconds: 30, renewTime: old, acquireTime: old },
      },
    });
    await ns.core.createNamespacedPod({
      namespace: ns.name,
      body: {
        metadata: {
          name: "orphan",
          ownerReferences: [
            {
              apiVersion: "coordination.k8s.io/v1",
              kind: "Lease",
              name: lease.metadata!.name!,
              uid: lease.metadata!.uid!,
            },
          ],
        },
        spec: {
          automountServiceAccountToken: false,
          securityContext: { runAsUser: 1000, runAsNonRoot: true },
          containers: [
            {
              name: "box",
              image: inject("sandboxImage"),
              imagePullPolicy: "Never",
              args: ["sleep", "infinity"],
            },
          ],
        },
      },
    });
    // This process's own Lease is fresh: it stays.
    expect(await reapExpiredLeases(coordination, ns.name)).toEqual(["drydock-owner-elsewhere"]);
    await expect
      .poll(async () => (await ns.pods()).map((p) => p.metadata?.name), { timeout: 60_000 })
      .toEqual([]);
    const leases = (await coordination.listNamespacedLease({ namespace: ns.name })).items.map(
      (l) => l.metadata?.name,
    );
    expect(leases).toHaveLength(1);
    expect(leases[0]).toMatch(/^drydock-owner-[0-9a-f]{16}-[0-9a-f]{6}$/);
    await engine.close();
    expect((await coordination.listNamespacedLease({ namespace: ns.name })).items).toEqual([]);
  });
});
