/**
 * A repository's environment on a cluster: with `environmentRegistry` (`serve --env-registry`),
 * the server builds the repository's devcontainer on the local Docker engine, on its own `--image`
 * (here a box image in a registry on 127.0.0.1, named by digest), pushes it as
 * `REGISTRY/PATH/drydock-env`, and the session's Pod names it by digest and runs it. The first box
 * is an environment image, so the isolation probe runs the server's own image instead (an
 * environment's programs could fake its answer). Without a registry, a cluster's sessions use the
 * server's image as it is.
 */
import { randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import { Engine } from "../../src/engine/engine.js";
import { testNamespace } from "../helpers/kube.js";
import { LoopbackRegistry } from "../helpers/loopback-registry.js";
import { inMemoryDrydock, ok } from "../helpers/mcp-client.js";
import { pushedBoxImage } from "../helpers/registry-images.js";
import { tempRepo } from "../helpers/repos.js";
import { sandboxImage } from "../helpers/sessions.js";

const run = randomBytes(4).toString("hex");

describe("environments on a cluster", () => {
  it("builds the repository's environment here, pushes it, and the Pod runs it by digest", async () => {
    const docker = await Engine.connect();
    await using registry = await LoopbackRegistry.start();
    const base = await pushedBoxImage(
      docker,
      sandboxImage(),
      `${registry.address}/drydock-box`,
      `base-${run}`,
    );

    await using ns = await testNamespace("environment");
    using repo = tempRepo({
      ".devcontainer/devcontainer.json": '{ "build": { "dockerfile": "Dockerfile" } }\n',
      ".devcontainer/Dockerfile": `ARG DRYDOCK_SANDBOX\nFROM \${DRYDOCK_SANDBOX}\nUSER root\nRUN echo env-${run} > /opt/env-marker\nUSER agent\n`,
      "a.txt": "one\n",
    });
    await using drydock = await inMemoryDrydock({
      engine: await ns.engine(),
      repo: repo.path,
      image: base.byDigest,
      environmentRegistry: `${registry.address}/team`,
      pool: { size: 0 },
    });
    const created = ok(
      await drydock.client.callTool({ name: "session_create", arguments: {} }, undefined, {
        timeout: 800_000,
      }),
    );
    expect(created.image).toMatch(new RegExp(`^${registry.address}/team/drydock-env@sha256:[a-f0-9]{64}$`));
    const shown = ok(
      await drydock.client.callTool(
        {
          name: "bash",
          arguments: { session_id: created.session_id, command: "cat /opt/env-marker /etc/drydock-marker" },
        },
        undefined,
        { timeout: 120_000 },
      ),
    );
    expect(shown.stdout).toBe(`env-${run}\nbase-${run}\n`);
    const pod = (await ns.pods()).find((p) => p.metadata?.name === `drydock-${String(created.session_id)}`);
    expect(pod?.spec?.containers[0]?.image).toBe(created.image);
    expect(pod?.status?.containerStatuses?.[0]?.imageID).toContain(String(created.image).split("@")[1]);
  }, 1_200_000);
});
