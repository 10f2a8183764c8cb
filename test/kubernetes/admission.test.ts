/**
 * Admission on the cluster: a session is admitted only while its box fits, counted as the
 * scheduler and quota admission would (cluster-room.ts), and a create or a fork that does not fit
 * is refused at once with the numbers, not left Pending until a timeout. Each test has a
 * namespace of its own.
 */
import { V1ResourceQuota } from "@kubernetes/client-node";
import { describe, expect, it } from "vitest";
import { testNamespace } from "../helpers/kube.js";
import { failure, inMemoryDrydock, ok } from "../helpers/mcp-client.js";
import { tempRepo } from "../helpers/repos.js";

const LONG = { timeout: 400_000 };

describe("admission on a cluster", () => {
  it("stops at the namespace's ResourceQuota, naming it, for a create and for a fork", async () => {
    await using ns = await testNamespace("quota");
    const quota = new V1ResourceQuota();
    quota.metadata = { name: "team" };
    quota.spec = { hard: { "requests.memory": "3Gi", "limits.memory": "3Gi" } };
    await ns.core.createNamespacedResourceQuota({ namespace: ns.name, body: quota });
    using repo = tempRepo({ "a.txt": "one\n" });
    await using drydock = await inMemoryDrydock({
      engine: await ns.engine(),
      repo: repo.path,
      pool: { size: 0 },
    });
    const first = ok(
      await drydock.client.callTool({ name: "session_create", arguments: {} }, undefined, LONG),
    );
    const figure = await drydock.server.access.admission();
    expect(figure.fit).toBe(0);
    expect(figure.why).toMatch(
      /bound by the ResourceQuota team of drydock-t-quota-\d+: (requests|limits)\.memory 3Gi \(2Gi used\)/,
    );

    const started = Date.now();
    const refused = failure(
      await drydock.client.callTool({ name: "session_create", arguments: {} }, undefined, LONG),
    );
    expect(refused).toMatch(
      /no room on the cluster for another session: 0 more boxes of 1 CPU and 2,048 MiB fit, bound by the ResourceQuota team/,
    );
    const fork = failure(
      await drydock.client.callTool(
        { name: "session_fork", arguments: { session_id: first.session_id, n: 2 } },
        undefined,
        LONG,
      ),
    );
    expect(fork).toMatch(
      /n: 2 forks asked for, but no more sessions fit now; nothing was forked\. 0 more boxes .*ResourceQuota team/,
    );
    expect(Date.now() - started).toBeLessThan(30_000);
    expect((await ns.pods()).map((p) => p.metadata?.name)).toEqual([`drydock-${String(first.session_id)}`]);
  }, 600_000);

  it("stops when the nodes hold no more boxes of the size, counting each node's requests", async () => {
    await using ns = await testNamespace("nodes");
    using repo = tempRepo({ "a.txt": "one\n" });
    // Boxes of 2 CPU: each of the test cluster's nodes (2 allocatable CPU) holds one.
    await using drydock = await inMemoryDrydock({
      engine: await ns.engine(),
      repo: repo.path,
      pool: { size: 0 },
      sessionOptions: { cpus: 2 },
    });
    const nodes = (await ns.core.listNode()).items.length;
    const made: string[] = [];
    for (let i = 0; i < nodes; i++) {
      const created = ok(
        await drydock.client.callTool({ name: "session_create", arguments: {} }, undefined, LONG),
      );
      made.push(String(created.session_id));
      // The isolation probe's Pods (made before the first box) are gone before the next count.
      for (let wait = 0; wait < 60; wait++) {
        if ((await ns.pods()).every((p) => !p.metadata?.name?.startsWith("drydock-probe-"))) break;
        await new Promise((r) => setTimeout(r, 1_000));
      }
    }
    const pods = await ns.pods();
    expect(new Set(pods.map((p) => p.spec?.nodeName)).size).toBe(nodes);
    const refused = failure(
      await drydock.client.callTool({ name: "session_create", arguments: {} }, undefined, LONG),
    );
    expect(refused).toMatch(
      /no room on the cluster for another session: 0 more boxes of 2 CPU and 2,048 MiB fit on the nodes \(.*0 of 2 CPU.*: 0.*requests against allocatable/,
    );
    expect((await ns.pods()).length).toBe(nodes);
  }, 900_000);
});
