/**
 * The backend refuses to make boxes in a namespace whose NetworkPolicy is not enforced: with the
 * node firewall (what holds pods in on this cluster) bypassed for pod-to-pod traffic, a session is
 * refused with the plugin's duty and how to turn enforcement on, and no box is left; with it in
 * place, the same session starts (the probe passes where enforcement works).
 */
import { execFileSync } from "node:child_process";
import { describe, expect, it } from "vitest";
import { LABEL_SESSION } from "../../src/engine/labels.js";
import { boxSpec } from "../../src/sandbox/box-profile.js";
import { failure, inMemoryDrydock, ok } from "../helpers/mcp-client.js";
import { testNamespace } from "../helpers/kube.js";
import { tempRepo } from "../helpers/repos.js";

/** For the test only: what a network that does not hold pods in does, forwarding between them. */
const OPEN = [
  "-i",
  "dd-kube-br+",
  "-o",
  "dd-kube-br+",
  "-m",
  "comment",
  "--comment",
  "drydock-probe-test-open",
  "-j",
  "ACCEPT",
];

async function sessionOn(label: string) {
  const ns = await testNamespace(label);
  const repo = tempRepo({ "a.txt": "one\n" });
  const drydock = await inMemoryDrydock({ engine: await ns.engine(), repo: repo.path, pool: { size: 0 } });
  const create = () =>
    drydock.client.callTool({ name: "session_create", arguments: {} }, undefined, { timeout: 240_000 });
  return {
    ns,
    drydock,
    create,
    async [Symbol.asyncDispose]() {
      await drydock[Symbol.asyncDispose]();
      await ns[Symbol.asyncDispose]();
      repo[Symbol.dispose]();
    },
  };
}

describe("the NetworkPolicy probe before the first box", () => {
  it("refuses a session where pods reach each other, naming the plugin's duty and the fix", async () => {
    execFileSync("iptables", ["-w", "-I", "FORWARD", "1", ...OPEN]);
    try {
      await using s = await sessionOn("probe-open");
      const said = failure(await s.create());
      expect(said).toMatch(
        /drydock makes no box here: a box reached another box's listener at [\d.]+:8000 .* the network plugin does not enforce NetworkPolicy, so a box would have the network/,
      );
      expect(said).toMatch(/Calico or Cilium/);
      expect(said).toMatch(/enableNetworkPolicy=true/);
      // No box was made, and the probe's Pods are gone.
      expect((await s.ns.pods()).map((p) => p.metadata?.name)).toEqual([]);
      // The verdict is kept: the next session is refused at once, without another probe.
      const started = Date.now();
      expect(failure(await s.create())).toMatch(/does not enforce NetworkPolicy/);
      expect(Date.now() - started).toBeLessThan(2_000);
    } finally {
      execFileSync("iptables", ["-w", "-D", "FORWARD", ...OPEN]);
    }
  });

  it("starts the session where the policy holds", async () => {
    await using s = await sessionOn("probe-held");
    const created = ok(await s.create());
    const pods = await s.ns.pods();
    expect(pods.map((p) => p.metadata?.name)).toEqual([`drydock-${String(created.session_id)}`]);
  });

  it("does not take the verdict of an image built from a repository, and says what to give", async () => {
    await using ns = await testNamespace("probe-env");
    const engine = await ns.engine();
    // An environment image's bash or timeout could answer "not reached" whatever happened.
    const spec = boxSpec(
      { image: "drydock-env:0123abcd", memoryMB: 256, cpus: 0.25, labels: { [LABEL_SESSION]: "env" } },
      `drydock-env-probe-${process.pid}`,
    );
    await expect(engine.createBox(spec)).rejects.toThrow(
      /does not check with drydock-env:0123abcd: an environment image is built from a repository's definition.*probe-image=IMAGE/,
    );
    expect(await ns.pods()).toEqual([]);
  });
});
