/**
 * Environments through the MCP server: a session's box is made from its repository's environment
 * image, built on first use with the build's lines as progress notifications on the tool call; the
 * warm pool is filled with the served repository's environment once it is built.
 */
import { execFileSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { afterAll, describe, expect, it } from "vitest";
import { failure, ok, inMemoryDrydock } from "../helpers/mcp-client.js";
import { tempRepo } from "../helpers/repos.js";
import { sandboxImage } from "../helpers/sessions.js";

/** Images these tests built (each unique to its test): removed at the end. */
const built = new Set<string>();
afterAll(() => {
  for (const tag of built) execFileSync("docker", ["rmi", "-f", tag], { stdio: "ignore" });
});

/** A project whose test needs tomli-w from PyPI; the nonce makes its environment one no test built before. */
function project() {
  const nonce = randomBytes(6).toString("hex");
  return tempRepo({
    "test_dump.py": 'import tomli_w\n\ndef test_dump():\n    assert tomli_w.dumps({"a": 1}) == "a = 1\\n"\n',
    "requirements.txt": "tomli-w==1.0.0\n",
    ".drydock/environment.yaml": `env: {BUILD_NONCE: "${nonce}"}\nsetup:\n  - pip install -r requirements.txt\n`,
  });
}

describe("environments in the MCP server", () => {
  it("session_create builds the environment, reports the build as progress, and the box runs the tests offline", async () => {
    using repo = project();
    await using drydock = await inMemoryDrydock({ repo: repo.path });
    const progress: string[] = [];
    const created = ok(
      await drydock.client.callTool({ name: "session_create", arguments: {} }, undefined, {
        onprogress: (p) => void progress.push(p.message ?? ""),
        timeout: 600_000,
      }),
    );
    expect(created.image).toMatch(/^drydock-env:[0-9a-f]{12}$/);
    built.add(created.image as string);
    expect(progress.some((m) => m.startsWith("building environment drydock-env:"))).toBe(true);
    expect(progress.some((m) => /^built drydock-env:/.test(m))).toBe(true);
    const tests = ok(
      await drydock.client.callTool({
        name: "bash",
        arguments: { session_id: created.session_id, command: "python3 -m pytest -q 2>&1 | tail -1" },
      }),
    );
    expect(tests.stdout).toMatch(/1 passed/);
    // The next session of the same repository reuses the image: nothing is built.
    const again: string[] = [];
    const second = ok(
      await drydock.client.callTool({ name: "session_create", arguments: {} }, undefined, {
        onprogress: (p) => void again.push(p.message ?? ""),
      }),
    );
    expect(second.image).toBe(created.image);
    expect(again.filter((m) => m.startsWith("building environment"))).toEqual([]);
  });

  it("a broken definition does not stop the server: session_create says which file, line and fix", async () => {
    using repo = tempRepo({
      ".devcontainer/devcontainer.json": '{\n  "dockerComposeFile": "compose.yml"\n}\n',
    });
    await using drydock = await inMemoryDrydock({ repo: repo.path, pool: { size: 1 } });
    expect(drydock.server.manager.pool).toBeUndefined();
    const message = failure(await drydock.client.callTool({ name: "session_create", arguments: {} }));
    expect(message).toMatch(
      /^\.devcontainer\/devcontainer\.json:2: dockerComposeFile is not supported \(a box is one container\); give a build\.dockerfile/,
    );
    // Task stacks and other tools without a box still work.
    ok(
      await drydock.client.callTool({
        name: "create_new_task",
        arguments: { title: "still here", body: "" },
      }),
    );
  });

  it("--no-env gives every box the sandbox image as it is", async () => {
    using repo = project();
    await using drydock = await inMemoryDrydock({ repo: repo.path, environment: false });
    const created = ok(await drydock.client.callTool({ name: "session_create", arguments: {} }));
    expect(created.image).toBe(sandboxImage());
  });

  it("the warm pool is filled with the served repository's environment once its background build is done", async () => {
    using repo = project();
    await using drydock = await inMemoryDrydock({ repo: repo.path, pool: { size: 1 } });
    const manager = drydock.server.manager;
    const deadline = Date.now() + 300_000;
    while (!manager.pool && Date.now() < deadline) await new Promise((r) => setTimeout(r, 500));
    expect(manager.pool, "the pool started after the build").toBeDefined();
    await manager.pool!.full();
    const created = ok(await drydock.client.callTool({ name: "session_create", arguments: {} }));
    expect(created.image).toMatch(/^drydock-env:/);
    built.add(created.image as string);
    expect(manager.get(created.session_id as string).warm).toBe(true);
  });
});
