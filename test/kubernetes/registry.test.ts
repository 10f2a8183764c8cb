/**
 * Box images from a registry, on the test cluster: an image pushed with drydock's own push to a
 * registry on 127.0.0.1 (Debian's docker-registry, which the nodes' containerd reaches over plain
 * HTTP on loopback) is pulled by the node, named by digest in the Pod though the server was given
 * a tag, and is the image the box runs (a marker layer only it has). A tag the registry lacks is
 * refused before any Pod is made, naming the image.
 */
import { randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import { Engine } from "../../src/engine/engine.js";
import { manifestDigest } from "../../src/engine/registry-manifest.js";
import { testNamespace } from "../helpers/kube.js";
import { LoopbackRegistry } from "../helpers/loopback-registry.js";
import { failure, inMemoryDrydock, ok } from "../helpers/mcp-client.js";
import { pushedBoxImage } from "../helpers/registry-images.js";
import { tempRepo } from "../helpers/repos.js";
import { sandboxImage } from "../helpers/sessions.js";

const run = randomBytes(4).toString("hex");

describe("box images from a registry", () => {
  it("a tag given to the server becomes the digest the Pod names, pulled by the node from the registry", async () => {
    const docker = await Engine.connect();
    await using registry = await LoopbackRegistry.start();
    const marker = `kube-registry-${run}`;
    const pushed = await pushedBoxImage(docker, sandboxImage(), `${registry.address}/drydock-box`, marker);
    expect(await manifestDigest(pushed.tagged, null)).toBe(pushed.digest);

    await using ns = await testNamespace("registry");
    using repo = tempRepo({ "a.txt": "one\n" });
    await using drydock = await inMemoryDrydock({
      engine: await ns.engine(),
      repo: repo.path,
      image: pushed.tagged,
      pool: { size: 0 },
    });
    const created = ok(
      await drydock.client.callTool({ name: "session_create", arguments: {} }, undefined, {
        timeout: 400_000,
      }),
    );
    const shown = ok(
      await drydock.client.callTool(
        { name: "bash", arguments: { session_id: created.session_id, command: "cat /etc/drydock-marker" } },
        undefined,
        { timeout: 120_000 },
      ),
    );
    expect(shown.stdout).toBe(`${marker}\n`);
    const box = (await ns.pods()).find((p) => p.metadata?.name === `drydock-${String(created.session_id)}`);
    expect(box?.spec?.containers[0]?.image).toBe(pushed.byDigest);
    expect(box?.status?.containerStatuses?.[0]?.imageID).toContain(pushed.digest);
  }, 900_000);

  it("refuses a tag the registry does not have, naming it, and makes no Pod", async () => {
    await using registry = await LoopbackRegistry.start();
    await using ns = await testNamespace("registry-missing");
    using repo = tempRepo({ "a.txt": "one\n" });
    const missing = `${registry.address}/drydock-box:absent-${run}`;
    await using drydock = await inMemoryDrydock({
      engine: await ns.engine(),
      repo: repo.path,
      image: missing,
      pool: { size: 0 },
    }).catch((error: unknown) => {
      // The server may refuse at start: that is the refusal under test.
      expect(String(error)).toContain(missing);
      return undefined;
    });
    if (drydock) {
      const refused = failure(
        await drydock.client.callTool({ name: "session_create", arguments: {} }, undefined, {
          timeout: 240_000,
        }),
      );
      expect(refused).toContain(missing);
    }
    expect(await ns.pods()).toEqual([]);
  }, 300_000);
});
