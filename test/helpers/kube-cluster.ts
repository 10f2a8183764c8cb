/**
 * A setup file of the kubernetes project: before each test file, the test cluster is up with the
 * sandbox image on its nodes (scripts/kube/cluster.sh up and load both return at once when that
 * is so already). A cluster that cannot come up fails the file with the script's own words.
 */
import { execFileSync } from "node:child_process";
import { beforeAll, inject } from "vitest";

const CLUSTER = "scripts/kube/cluster.sh";

beforeAll(() => {
  const image = inject("sandboxImage");
  const run = (args: string[]) =>
    execFileSync("bash", [CLUSTER, ...args], { stdio: ["ignore", "pipe", "inherit"] });
  run(["up", "--nodes", "2", "--image", image]);
  run(["load", image]);
}, 900_000);
