import { execFileSync } from "node:child_process";
import type { TestProject } from "vitest/node";
import { Engine } from "../../src/engine/engine.js";
import { buildSandboxImage } from "../../src/sandbox/sandbox-image.js";

const CLUSTER = "scripts/kube/cluster.sh";

function isUp(): boolean {
  try {
    execFileSync("bash", [CLUSTER, "status"], { stdio: "ignore" });
    return true;
  } catch {
    return false;
  }
}

/**
 * The kubernetes project's set-up. Vitest runs every project's set-up when the run starts, so the
 * cluster is not brought up here (it would run beside every other project's tests): the first
 * test file of this project brings it up (kube-cluster.ts, a setup file), and this takes it down
 * after the run if the run brought it up (`DRYDOCK_KEEP_CLUSTER=1` keeps it).
 */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const engine = await Engine.connect();
  const image =
    process.env.DRYDOCK_IMAGE ??
    (await buildSandboxImage(engine, { onLine: (l) => console.error(`[image] ${l}`) }));
  const wasUp = isUp();
  const kubeconfig = /^(?:export )?KUBECONFIG=(.*)$/m.exec(
    execFileSync("bash", [CLUSTER, "env"], { encoding: "utf8" }),
  )?.[1];
  project.provide("sandboxImage", image);
  project.provide("kubeconfig", kubeconfig ?? "");
  return async () => {
    if (!wasUp && !process.env.DRYDOCK_KEEP_CLUSTER && isUp()) {
      execFileSync("bash", [CLUSTER, "down"], { stdio: ["ignore", "pipe", "inherit"] });
    }
  };
}

declare module "vitest" {
  export interface ProvidedContext {
    kubeconfig: string;
  }
}
