/**
 * `drydock run --engine kubernetes:…`: one command in a Pod on the test cluster, its output and
 * the diff printed, its exit code kept, nothing left in the namespace; and `--network` refused
 * there before anything is made.
 */
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { describe, expect, inject, it } from "vitest";
import { testNamespace } from "../helpers/kube.js";
import { tempRepo } from "../helpers/repos.js";

const cli = join(process.cwd(), "dist", "cli", "main.js");

function run(args: string[], repo: string) {
  return spawnSync(
    process.execPath,
    [cli, "run", "--repo", repo, "--image", inject("sandboxImage"), ...args],
    {
      encoding: "utf8",
      timeout: 300_000,
    },
  );
}

describe("drydock run on the cluster", () => {
  it("runs the command in a Pod, prints its output and the diff, keeps its exit code, and leaves nothing", async () => {
    await using ns = await testNamespace("run");
    using repo = tempRepo({ "README.md": "hello\n" });
    const r = run(
      ["--engine", ns.target, "--", 'echo "box: $HOSTNAME" && echo more >> README.md && exit 3'],
      repo.path,
    );
    expect(r.status, r.stderr).toBe(3);
    // The box's hostname is its Pod's name, which drydock gives every box it makes.
    expect(r.stderr).toMatch(/^box: drydock-[0-9a-f]{12}$/m);
    expect(r.stdout).toContain("+more");
    // Deleted when run ends; gone once its grace (1 s) is over.
    await expect.poll(() => ns.pods(), { timeout: 60_000, interval: 1000 }).toEqual([]);
  });

  it("refuses --network there, naming the flag, before a Pod is made", async () => {
    await using ns = await testNamespace("run-net");
    using repo = tempRepo({ "README.md": "hello\n" });
    const r = run(["--engine", ns.target, "--network", "bridge", "--", "true"], repo.path);
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(/--network: boxes on kubernetes:.* have no network .* leave --network out/);
    expect(await ns.pods()).toEqual([]);
  });
});
