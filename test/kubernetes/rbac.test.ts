/**
 * drydock as a client that is not a cluster admin: a ServiceAccount bound only to the Role and
 * ClusterRole docs/kubernetes.md gives (kube-rbac.ts reads them from the page). doctor passes and
 * a session runs (create, a command, destroy) through `serve`; with one permission taken away,
 * doctor names it and connect's refusal keeps the API's words (verb, resource, identity).
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { afterAll, describe, expect, inject, it } from "vitest";
import { KubernetesEngine } from "../../src/engine/kubernetes/kubernetes-engine.js";
import { parseKubernetesTarget } from "../../src/engine/kubernetes/kubernetes-target.js";
import { describeError } from "../../src/util/errors.js";
import { testNamespace } from "../helpers/kube.js";
import { boundIdentity } from "../helpers/kube-rbac.js";
import { ok } from "../helpers/mcp-client.js";
import { tempRepo } from "../helpers/repos.js";

const cli = join(process.cwd(), "dist", "cli", "main.js");
const dir = mkdtempSync(join(tmpdir(), "drydock-rbac-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

interface Check {
  name: string;
  ok: boolean;
  detail: string;
  fix?: string;
}

function doctor(target: string): { code: number | null; checks: Check[]; out: string } {
  const run = spawnSync(
    process.execPath,
    [cli, "doctor", "--engine", target, "--image", inject("sandboxImage"), "--json"],
    { encoding: "utf8", timeout: 240_000 },
  );
  const checks = JSON.parse(run.stdout || "[]") as Check[];
  return { code: run.status, checks, out: JSON.stringify(checks, null, 2) + run.stderr };
}

describe("drydock bound only to the documented Role and ClusterRole", () => {
  it("passes doctor and runs a session through serve", async () => {
    await using ns = await testNamespace("rbac");
    await using id = await boundIdentity(ns.name, dir);
    const checked = doctor(id.target);
    expect(checked.code, checked.out).toBe(0);
    const byName = Object.fromEntries(checked.checks.map((c) => [c.name, c]));
    expect(byName.permissions?.detail).toMatch(/all 15 the backend uses/);
    expect(byName["network isolation"]?.detail).toMatch(/did not reach another box's listener/);

    using repo = tempRepo({ "a.txt": "one\n" });
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [
        cli,
        "serve",
        "--engine",
        id.target,
        "--repo",
        repo.path,
        "--image",
        inject("sandboxImage"),
        "--pool",
        "0",
        // gVisor: the ClusterRole's RuntimeClasses read is what maps runsc to the cluster's class.
        "--runtime",
        "runsc",
      ],
      env: { ...(process.env as Record<string, string>), KUBECONFIG: "/nonexistent" },
      stderr: "pipe",
    });
    let stderr = "";
    transport.stderr?.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
    const client = new Client({ name: "rbac", version: "1" });
    try {
      await client.connect(transport);
      const call = async (name: string, args: Record<string, unknown>) =>
        ok(await client.callTool({ name, arguments: args }, undefined, { timeout: 240_000 }));
      const created = await call("session_create", {});
      const ran = await call("bash", { session_id: created.session_id, command: "cat a.txt; id -u" });
      expect(ran.stdout).toBe("one\n1000\n");
      const pods = await ns.pods();
      expect(pods.map((p) => p.metadata?.name)).toEqual([`drydock-${String(created.session_id)}`]);
      expect(pods[0]?.spec?.runtimeClassName).toBe("gvisor");
      await call("session_destroy", { session_id: created.session_id });
      await expect.poll(async () => (await ns.pods()).length, { timeout: 30_000 }).toBe(0);
    } catch (error) {
      throw new Error(`${describeError(error)}\nserve said:\n${stderr}`, { cause: error });
    } finally {
      await client.close().catch(() => undefined);
    }
  });

  it("names a permission taken away, in doctor and in connect's refusal with the API's words", async () => {
    await using ns = await testNamespace("rbac-less");
    await using id = await boundIdentity(ns.name, dir, (role) => ({
      ...role,
      rules: role.rules!.map((rule) =>
        rule.resources?.includes("leases")
          ? { ...rule, verbs: rule.verbs.filter((v) => v !== "create") }
          : rule,
      ),
    }));
    const checked = doctor(id.target);
    expect(checked.code, checked.out).toBe(1);
    const permissions = checked.checks.find((c) => c.name === "permissions");
    expect(permissions?.ok).toBe(false);
    expect(permissions?.detail).toBe(
      `denied: create leases (coordination.k8s.io) in ${ns.name}: this drydock's Lease`,
    );
    const engineCheck = checked.checks.find((c) => c.name.startsWith("engine "));
    expect(engineCheck?.detail).toContain(`cannot create resource "leases"`);

    const refused = await KubernetesEngine.connect(parseKubernetesTarget(id.target), {
      appArmor: false,
    }).then(
      async (engine) => {
        await engine.close();
        return "connected";
      },
      (error: unknown) => describeError(error),
    );
    expect(refused).not.toMatch(/does not answer|HTTP-Code/);
    expect(refused).toContain(
      `leases.coordination.k8s.io is forbidden: User "${id.user}" cannot create resource "leases" in API group "coordination.k8s.io" in the namespace "${ns.name}"`,
    );
    expect(refused).toContain("docs/kubernetes.md");
  });
});
