/**
 * Whether the namespace's NetworkPolicy holds, found by trying it: a box's "no network" is a
 * deny-all policy (network-policy.ts), and a network plugin that does not enforce policies (the
 * default on EKS and classic GKE, and any plain bridge) accepts the policy and lets everything
 * through. So two probe Pods, made as a box is (the same image, user, hardening and namespace,
 * under its deny-all policy), go on one node: one listens on a port, and the other tries to open
 * a TCP connection to it at its Pod address. A connection means boxes would have the network.
 *
 * Both go on the listener's node so the answer does not depend on whether nodes route to each
 * other; a plugin enforces a policy between two Pods of one node as between two nodes. A plugin
 * may start a Pod before it has handled a policy made a moment earlier, so a connection is tried
 * again a few times, seconds apart, before the verdict is "not enforced". The probe Pods are owned
 * by drydock's Lease, so they go with it if drydock dies mid-probe.
 */
import { randomBytes } from "node:crypto";
import { DrydockError } from "../../util/errors.js";
import type { ContainerSpec } from "../container-spec.js";
import type { ExecOptions, ExecResult } from "../exec.js";

/** The label every probe Pod carries: what it is, and not a box (no session label). */
export const PROBE_LABEL = "drydock.probe";
const PORT = 8000;
/** Tries before "reached" is the verdict, and the pause between them (a plugin's lag). */
const ATTEMPTS = 4;
const PAUSE_MS = 2_500;

export interface ProbeHost {
  /** Makes a Pod from spec (on `node` when given) without probing; resolves with its name. */
  makeProbePod(spec: ContainerSpec, node?: string): Promise<string>;
  start(id: string): Promise<void>;
  exec(id: string, argv: string[], options?: ExecOptions): Promise<ExecResult>;
  podIp(id: string): Promise<string | undefined>;
  boxNode(id: string): Promise<string | undefined>;
  remove(id: string): Promise<void>;
}

export interface IsolationVerdict {
  /** True: a probe box did not reach another's listener. */
  isolated: boolean;
  /** What was tried and what came of it, for a person. */
  detail: string;
}

/** How to make a cluster enforce NetworkPolicy: the plugin's duty, and the usual ways to turn it on. */
export const ENFORCEMENT_FIX =
  "boxes are held in by NetworkPolicy, which only the cluster's network plugin enforces: install one that does " +
  "(Calico or Cilium; on EKS turn on the VPC CNI's network policy agent, enableNetworkPolicy=true; on GKE create " +
  "the cluster with Dataplane V2 or --enable-network-policy; on AKS --network-policy azure|calico|cilium), " +
  "then check with `drydock doctor --engine`";

/** A probe Pod's spec from a box's: the same image and hardening, small, no mounts, runc, labelled as a probe. */
function probeSpec(box: ContainerSpec, name: string, command: string[]): ContainerSpec {
  return {
    ...box,
    name,
    labels: { [PROBE_LABEL]: "network" },
    command,
    memoryMB: 256,
    cpus: 0.25,
    runtime: undefined,
    processLimit: undefined,
  };
}

/** Opens a TCP connection to $0:$1 with bash alone (no tool the image may lack), within 3 s. */
const CONNECT = ["timeout", "3", "bash", "-c", 'exec 3<>"/dev/tcp/$0/$1"'];

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Runs the probe with boxes made like `box`; the probe Pods are removed whatever happens. */
export async function probeIsolation(host: ProbeHost, box: ContainerSpec): Promise<IsolationVerdict> {
  const tag = `drydock-probe-${randomBytes(4).toString("hex")}`;
  const made: string[] = [];
  try {
    const listener = await host.makeProbePod(
      probeSpec(box, `${tag}-l`, ["python3", "-m", "http.server", String(PORT), "--bind", "0.0.0.0"]),
    );
    made.push(listener);
    await host.start(listener);
    const node = await host.boxNode(listener);
    const prober = await host.makeProbePod(probeSpec(box, `${tag}-p`, ["sleep", "infinity"]), node);
    made.push(prober);
    await host.start(prober);
    const address = await host.podIp(listener);
    if (!address) throw new DrydockError("engine_error", `the probe Pod ${listener} has no address`);
    // The listener answers on its own loopback first: else "not reached" would prove nothing.
    let listening = false;
    for (let i = 0; i < 40 && !listening; i++) {
      listening = (await host.exec(listener, [...CONNECT, "127.0.0.1", String(PORT)])).exitCode === 0;
      if (!listening) await pause(250);
    }
    if (!listening) {
      throw new DrydockError(
        "engine_error",
        `the probe Pod ${listener} did not listen on port ${PORT} within 10 s (its image needs python3 and bash), so whether boxes are held in cannot be told`,
      );
    }
    for (let attempt = 1; ; attempt++) {
      const reached = (await host.exec(prober, [...CONNECT, address, String(PORT)])).exitCode === 0;
      if (!reached) {
        return {
          isolated: true,
          detail: `a box did not reach another box's listener at ${address}:${PORT} (both on ${node ?? "one node"})`,
        };
      }
      if (attempt >= ATTEMPTS) {
        return {
          isolated: false,
          detail: `a box reached another box's listener at ${address}:${PORT} (both on ${node ?? "one node"}) ${ATTEMPTS} times over ${((ATTEMPTS - 1) * PAUSE_MS) / 1000} s, under the namespace's deny-all NetworkPolicy: the network plugin does not enforce NetworkPolicy`,
        };
      }
      await pause(PAUSE_MS);
    }
  } finally {
    await Promise.allSettled(made.map((id) => host.remove(id)));
  }
}

/** The refusal to make boxes in a namespace whose policies are not enforced. */
export function isolationRefusal(engineName: string, verdict: IsolationVerdict): DrydockError {
  return new DrydockError(
    "network_not_enforced",
    `${engineName}: drydock makes no box here: ${verdict.detail}, so a box would have the network. ${ENFORCEMENT_FIX}`,
  );
}
