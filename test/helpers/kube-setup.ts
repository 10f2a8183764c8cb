import { execFileSync } from "node:child_process";
import type { TestProject } from "vitest/node";
import { Engine } from "../../src/engine/engine.js";
import { buildSandboxImage } from "../../src/sandbox/sandbox-image.js";

const CLUSTER = "scripts/kube/cluster.sh";

function cluster(args: string[]): string {
  return execFileSync("bash", [CLUSTER, ...args], { encoding: "utf8", stdio: ["ignore", "pipe", "inherit"] });
}

/**
 * The tests against a real cluster: brings the test cluster up (scripts/kube/cluster.sh, binaries
 * built by scripts/kube/build.sh, which the test command runs first), puts the sandbox image on its
 * nodes, and takes the cluster down afterwards if this run brought it up. A cluster that cannot
 * come up fails the project with the script's own message, never a skip.
 */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const engine = await Engine.connect();
  const image =
    process.env.DRYDOCK_IMAGE ??
    (await buildSandboxImage(engine, { onLine: (l) => console.error(`[image] ${l}`) }));
  let wasUp = false;
  try {
    execFileSync("bash", [CLUSTER, "status"], { stdio: "ignore" });
    wasUp = true;
  } catch {
    wasUp = false;
  }
  if (!wasUp) cluster(["up", "--nodes", "2", "--image", image]);
  cluster(["load", image]);
  const kubeconfig = /^KUBECONFIG=(.*)$/m.exec(cluster(["env"]))?.[1] ?? "";
  project.provide("sandboxImage", image);
  project.provide("kubeconfig", kubeconfig);
  return async () => {
    if (!wasUp && !process.env.DRYDOCK_KEEP_CLUSTER) cluster(["down"]);
  };
}

declare module "vitest" {
  export interface ProvidedContext {
    kubeconfig: string;
  }
}
