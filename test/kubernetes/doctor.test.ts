/**
 * `drydock doctor --engine kubernetes:…` against the test cluster: every check passes as it is,
 * and the network check fails once the node firewall (what holds boxes in on this cluster) is
 * taken away for the test, and passes again once it is back.
 */
import { execFileSync, spawnSync } from "node:child_process";
import { join } from "node:path";
import { PatchStrategy, setHeaderOptions } from "@kubernetes/client-node";
import { describe, expect, inject, it } from "vitest";
import { testNamespace } from "../helpers/kube.js";

const cli = join(process.cwd(), "dist", "cli", "main.js");

interface Check {
  name: string;
  ok: boolean;
  detail: string;
  fix?: string;
}

function doctor(target: string): { code: number | null; checks: Check[]; stderr: string } {
  const run = spawnSync(
    process.execPath,
    [cli, "doctor", "--engine", target, "--image", inject("sandboxImage"), "--json"],
    {
      encoding: "utf8",
      timeout: 240_000,
    },
  );
  return { code: run.status, checks: JSON.parse(run.stdout || "[]") as Check[], stderr: run.stderr };
}

/** For the test only: what a network that does not hold pods in does, forwarding between them. */
const OPEN = [
  "-i",
  "dd-kube-br+",
  "-o",
  "dd-kube-br+",
  "-m",
  "comment",
  "--comment",
  "drydock-doctor-test-open",
  "-j",
  "ACCEPT",
];

describe("doctor on the cluster", () => {
  it("passes every check, and fails the network check where pods reach each other", async () => {
    await using ns = await testNamespace("doctor");
    const good = doctor(ns.target);
    expect(good.code, JSON.stringify(good.checks, null, 2) + good.stderr).toBe(0);
    const byName = Object.fromEntries(good.checks.map((c) => [c.name, c]));
    expect(byName.permissions?.detail).toMatch(/all 15 the backend uses/);
    expect(byName.runtimes?.detail).toMatch(/runc, runsc/);
    // The test cluster's nodes are at 127.0.0.1, which the API server does not proxy to.
    expect(byName["node limits"]?.detail).toMatch(
      /podPidsLimit .*: 1024|\(address not allowed\).*cannot be read through the API server/,
    );
    expect(byName["network isolation"]?.detail).toMatch(/did not reach another box's listener/);

    // Ahead of the node firewall's drop (and Docker's DROP policy): pods forwarded to each other.
    // Pods on different nodes have no route to each other here, so one node takes both probes.
    const nodes = (await ns.core.listNode()).items.map((n) => n.metadata!.name!);
    const cordon = (name: string, unschedulable: boolean) =>
      ns.core.patchNode(
        { name, body: { spec: { unschedulable } } },
        setHeaderOptions("Content-Type", PatchStrategy.MergePatch),
      );
    execFileSync("iptables", ["-w", "-I", "FORWARD", "1", ...OPEN]);
    await cordon(nodes[1]!, true);
    try {
      const open = doctor(ns.target);
      expect(open.code).toBe(1);
      const isolation = open.checks.find((c) => c.name === "network isolation");
      expect(isolation?.ok).toBe(false);
      expect(isolation?.detail).toMatch(/reached another box's listener .*does not enforce NetworkPolicy/);
    } finally {
      execFileSync("iptables", ["-w", "-D", "FORWARD", ...OPEN]);
      await cordon(nodes[1]!, false);
    }
    expect(doctor(ns.target).code).toBe(0);
  });

  it("names the namespace that does not exist, and the fix", () => {
    const missing = doctor(
      `kubernetes:no-such-ns-${process.pid}?kubeconfig=${encodeURIComponent(inject("kubeconfig"))}&apparmor=off`,
    );
    expect(missing.code).toBe(1);
    expect(missing.checks.find((c) => c.name.startsWith("engine "))?.detail).toMatch(
      /namespace no-such-ns-\d+ does not exist; create it \(kubectl create namespace/,
    );
  });
});
