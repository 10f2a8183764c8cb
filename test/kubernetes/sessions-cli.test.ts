/**
 * `drydock sessions …` from another terminal, on a session whose box is a Pod: with
 * `--engine kubernetes:NAMESPACE` the verbs find the live session and read or change its box (list,
 * show, diff, checkpoint, checkpoints, restore, apply); without it, the local Docker engine has no
 * such box, and the answer says to name the cluster.
 */
import { describe, expect, it } from "vitest";
import { runDrydock } from "../helpers/cli.js";
import { testNamespace } from "../helpers/kube.js";
import { inMemoryDrydock, ok } from "../helpers/mcp-client.js";
import { git, tempRepo } from "../helpers/repos.js";

const drydock = (args: string[]) => runDrydock(args);

describe("the sessions verbs on a cluster", () => {
  it("find and work on a live session's Pod with --engine, and say to name the cluster without it", async () => {
    await using ns = await testNamespace("sessions-cli");
    using repo = tempRepo({ "a.txt": "one\n" });
    await using server = await inMemoryDrydock({
      engine: await ns.engine(),
      repo: repo.path,
      pool: { size: 0 },
    });
    const id = String(
      ok(
        await server.client.callTool({ name: "session_create", arguments: {} }, undefined, {
          timeout: 400_000,
        }),
      ).session_id,
    );
    ok(
      await server.client.callTool(
        { name: "bash", arguments: { session_id: id, command: "echo two > /workspace/a.txt" } },
        undefined,
        { timeout: 120_000 },
      ),
    );
    const engine = ["--engine", ns.target];

    const listed = await drydock(["sessions", "list", "--json", ...engine]);
    expect(listed.code, listed.stderr).toBe(0);
    const rows = JSON.parse(listed.stdout) as Array<{ session: string; state: string }>;
    expect(rows.map((r) => r.session)).toContain(id);

    const shown = await drydock(["sessions", "show", id, "--json", ...engine]);
    expect(shown.code, shown.stderr).toBe(0);
    expect(shown.stdout).toContain(`drydock-${id}`);

    const diff = await drydock(["sessions", "diff", id, ...engine]);
    expect(diff.code, diff.stderr).toBe(0);
    expect(diff.stdout).toContain("+two");

    const saved = await drydock(["sessions", "checkpoint", id, "before", ...engine]);
    expect(saved.code, saved.stderr).toBe(0);
    expect(saved.stdout).toMatch(/saved checkpoint before: 1 changed file/);
    const listedCheckpoints = await drydock(["sessions", "checkpoints", id, "--json", ...engine]);
    expect(JSON.parse(listedCheckpoints.stdout)).toEqual([expect.objectContaining({ name: "before" })]);
    ok(
      await server.client.callTool(
        { name: "bash", arguments: { session_id: id, command: "echo three > /workspace/a.txt" } },
        undefined,
        { timeout: 120_000 },
      ),
    );
    const restored = await drydock(["sessions", "restore", id, "before", ...engine]);
    expect(restored.code, restored.stderr).toBe(0);

    const applied = await drydock(["sessions", "apply", id, ...engine]);
    expect(applied.code, applied.stderr).toBe(0);
    expect(git(repo.path, "show", `drydock/${id}:a.txt`)).toBe("two\n");

    // Without --engine the local Docker engine is asked: no such box there, and the answer names the way.
    const local = await drydock(["sessions", "diff", id]);
    expect(local.code).not.toBe(0);
    expect(local.stderr).toMatch(/has no box on this engine any more .*--engine kubernetes:NAMESPACE/);
  }, 900_000);
});
