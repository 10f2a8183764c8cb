/**
 * `drydock sessions prune --engine kubernetes:…`: the Pods of a server killed with SIGKILL are
 * removed at once (their owner process is gone), without waiting for its Lease to expire.
 */
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { describe, expect, inject, it } from "vitest";
import { testNamespace } from "../helpers/kube.js";
import { ok } from "../helpers/mcp-client.js";
import { tempRepo } from "../helpers/repos.js";

const cli = join(process.cwd(), "dist", "cli", "main.js");

describe("sessions prune on the cluster", () => {
  it("removes the Pods of a server killed with SIGKILL, at once", async () => {
    await using ns = await testNamespace("prune");
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
    const client = new Client({ name: "prune", version: "1" });
    await client.connect(transport);
    ok(await client.callTool({ name: "session_create", arguments: {} }, undefined, { timeout: 240_000 }));
    expect(await ns.pods()).toHaveLength(1);
    process.kill(transport.pid!, "SIGKILL");
    await client.close().catch(() => undefined);

    const pruned = spawnSync(process.execPath, [cli, "sessions", "prune", "--engine", ns.target], {
      encoding: "utf8",
      timeout: 120_000,
    });
    expect(pruned.status, pruned.stderr).toBe(0);
    expect(pruned.stdout).toMatch(/^removed 1 box\(es\): /);
    const left = (await ns.pods()).filter((p) => !p.metadata?.deletionTimestamp);
    expect(left).toEqual([]);
  });
});
