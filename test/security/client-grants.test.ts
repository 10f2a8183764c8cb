/**
 * The MCP client may be the untrusted agent itself. What it asks of session_create must stay
 * within what the operator granted when starting the server: no network but the granted one, no
 * limit above the server's, no repository but the ones the server serves.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Engine } from "../../src/engine/engine.js";
import { LABEL_OWNER, currentOwner, formatOwner } from "../../src/engine/labels.js";
import { assertRepoServed, assertWithinGrants } from "../../src/server/session-request-policy.js";
import { failure, inMemoryDrydock, ok, type InMemoryDrydock } from "../helpers/mcp-client.js";
import { tempRepo, type TempRepo } from "../helpers/repos.js";

describe("session requests against the operator's grants (pure)", () => {
  it("lets a client tighten but never relax", () => {
    expect(() => assertWithinGrants({ network: "none", memoryMB: 512, cpus: 0.5 }, {})).not.toThrow();
    expect(() => assertWithinGrants({ network: "host" }, {})).toThrow(/^network: "host" is not a network/);
    expect(() => assertWithinGrants({ network: "bridge" }, { network: "none" })).toThrow(/--network/);
    expect(() => assertWithinGrants({ network: "ci-net" }, { network: "ci-net" })).not.toThrow();
    expect(() => assertWithinGrants({ network: "host" }, { network: "ci-net" })).toThrow(
      /allowed: "none" or "ci-net"/,
    );
    expect(() => assertWithinGrants({ memoryMB: 2049 }, {})).toThrow(/^memory_mb: 2049 is above .* 2048 MiB/);
    expect(() => assertWithinGrants({ memoryMB: 4096 }, { memoryMB: 4096 })).not.toThrow();
    expect(() => assertWithinGrants({ cpus: 2 }, {})).toThrow(/^cpus: 2 is above .*--cpus/);
    expect(() => assertRepoServed("/srv/a", ["/srv/a", "/srv/b"])).not.toThrow();
    expect(() => assertRepoServed("/srv/c", ["/srv/a"])).toThrow(/^repo: \/srv\/c is not .*--allow-repo/);
  });
});

describe("session_create over MCP", () => {
  let served: TempRepo;
  let other: TempRepo;
  let allowed: TempRepo;
  let drydock: InMemoryDrydock;

  // Boxes of this process only: other test files make boxes of their own at the same time.
  const boxesNow = async (): Promise<number> =>
    (await (await Engine.connect()).listBoxes(LABEL_OWNER, formatOwner(currentOwner()))).length;

  beforeAll(async () => {
    served = tempRepo({ "README.md": "served\n" });
    other = tempRepo({ "secret.txt": "another project's secret\n" });
    allowed = tempRepo({ "README.md": "allowed\n" });
    drydock = await inMemoryDrydock({ repo: served.path, allowedRepos: [allowed.path] });
  });

  afterAll(async () => {
    await drydock?.[Symbol.asyncDispose]();
    for (const repo of [served, other, allowed]) repo?.[Symbol.dispose]();
  });

  it("refuses the host's network and another box's network namespace", async () => {
    const victim = ok(await drydock.client.callTool({ name: "session_create", arguments: {} }));
    for (const network of ["host", "bridge", `container:drydock-${victim.session_id as string}`]) {
      const message = failure(
        await drydock.client.callTool({ name: "session_create", arguments: { network } }),
      );
      expect(message).toMatch(/^network: .* is not a network this server grants \(allowed: "none"\)/);
    }
    const tightened = ok(
      await drydock.client.callTool({ name: "session_create", arguments: { network: "none" } }),
    );
    expect((tightened.limits as { network: string }).network).toBe("none");
  });

  it("refuses limits above the server's and accepts lower ones", async () => {
    expect(
      failure(await drydock.client.callTool({ name: "session_create", arguments: { memory_mb: 65_536 } })),
    ).toMatch(/^memory_mb: 65536 is above this server's limit of 2048 MiB/);
    expect(
      failure(await drydock.client.callTool({ name: "session_create", arguments: { cpus: 64 } })),
    ).toMatch(/^cpus: 64 is above this server's limit of 1/);
    const lower = ok(
      await drydock.client.callTool({ name: "session_create", arguments: { memory_mb: 256, cpus: 0.5 } }),
    );
    expect(lower.limits).toMatchObject({ memoryMB: 256, cpus: 0.5 });
  });

  it("refuses a repository the server does not serve, so its files never enter a box and no diff reaches it", async () => {
    const before = await boxesNow();
    const message = failure(
      await drydock.client.callTool({ name: "session_create", arguments: { repo: other.path } }),
    );
    expect(message).toMatch(/^repo: .* is not a repository this server serves .*--allow-repo/);
    // A path inside it, or a symlink to it, is the same repository.
    expect(
      failure(
        await drydock.client.callTool({
          name: "session_create",
          arguments: { repo: join(other.path, ".git") },
        }),
      ),
    ).toMatch(/^repo: /);
    // A path that is no repository at all is refused as not served: no advice to `git init` it.
    const notARepo = failure(
      await drydock.client.callTool({ name: "session_create", arguments: { repo: "/etc" } }),
    );
    expect(notARepo).toMatch(/^repo: \/etc is not a repository this server serves .*--allow-repo/);
    expect(notARepo).not.toMatch(/git init/);
    expect(await boxesNow()).toBe(before);
    expect(readFileSync(join(other.path, "secret.txt"), "utf8")).toBe("another project's secret\n");
  });

  it("accepts the served repository by any path and one the operator allowed", async () => {
    const same = ok(
      await drydock.client.callTool({ name: "session_create", arguments: { repo: `${served.path}/.` } }),
    );
    expect(same.repo).toBe(drydock.server.config.repo);
    const extra = ok(
      await drydock.client.callTool({ name: "session_create", arguments: { repo: allowed.path } }),
    );
    const shown = ok(
      await drydock.client.callTool({
        name: "bash",
        arguments: { command: "cat README.md", session_id: extra.session_id },
      }),
    );
    expect(shown.stdout).toBe("allowed\n");
  });
});

describe("how many sessions clients may hold", () => {
  it("stops at the server's limit, with a clear error, until one is destroyed", async () => {
    using repo = tempRepo();
    await using drydock = await inMemoryDrydock({ repo: repo.path, maxSessions: 2 });
    const other = await drydock.connect("other");
    const first = ok(await drydock.client.callTool({ name: "session_create", arguments: {} }));
    // The default session counts too, whoever's it is.
    ok(await other.callTool({ name: "bash", arguments: { command: "true" } }));
    for (const client of [drydock.client, other]) {
      expect(failure(await client.callTool({ name: "session_create", arguments: {} }))).toMatch(
        /already 2 sessions, the most this server runs at once .*session_destroy.*--max-sessions/,
      );
    }
    ok(
      await drydock.client.callTool({ name: "session_destroy", arguments: { session_id: first.session_id } }),
    );
    ok(await drydock.client.callTool({ name: "session_create", arguments: {} }));
  });

  it("by default admits by the memory boxes use: refused past the reserve, admitted again once it is free", async () => {
    using repo = tempRepo();
    const hostMiB = (await (await Engine.connect()).capacity()).memoryMB;
    // Sessions may use 150 MiB in all: room for a new box, not beside one holding 100 MB of files.
    await using drydock = await inMemoryDrydock({
      repo: repo.path,
      maxSessions: undefined,
      memoryReserveMB: hostMiB - 150,
    });
    const call = (name: string, args: Record<string, unknown> = {}) =>
      drydock.client.callTool({ name, arguments: args });
    const first = ok(await call("session_create")).session_id as string;
    ok(await call("bash", { session_id: first, command: "head -c 100000000 /dev/zero > /workspace/fill" }));
    expect(failure(await call("session_create"))).toMatch(
      /^no memory for another session: the boxes of this server \(1\) use \d+ MiB of the 150 MiB sessions may use .*session_destroy.*--memory-reserve-mb/,
    );
    // Under gVisor the box's memory stays charged after the file is removed: its session goes.
    ok(await call("session_destroy", { session_id: first }));
    const second = ok(await call("session_create")).session_id as string;
    expect(second).not.toBe(first);
  });
});
