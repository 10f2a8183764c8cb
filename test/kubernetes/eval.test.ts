/**
 * `drydock eval` of the SWE-bench fixtures (test/fixtures/swebench) on the two-node cluster: the
 * same statuses as on Docker (test/integration/eval-swebench.test.ts), with each attempt's box
 * placed by the scheduler, on both nodes, and the image put on the nodes by the engine's loader.
 */
import { spawn } from "node:child_process";
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, inject, it } from "vitest";
import { testNamespace } from "../helpers/kube.js";
import { git } from "../helpers/repos.js";

const cli = join(process.cwd(), "dist", "cli", "main.js");
const fixtures = join(process.cwd(), "test", "fixtures", "swebench");

function drydock(
  cwd: string,
  args: string[],
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, [cli, ...args], {
    cwd,
    env: { ...process.env, DRYDOCK_STATE_DIR: join(cwd, "state") },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
  child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
  return new Promise((resolve) => child.on("close", (code) => resolve({ code, stdout, stderr })));
}

describe("eval on the cluster", () => {
  it("grades the fixtures as Docker does, with attempts placed by the scheduler on both nodes", async () => {
    await using ns = await testNamespace("eval");
    const work = mkdtempSync(join(tmpdir(), "drydock-eval-kube-"));
    try {
      mkdirSync(join(work, "clones"));
      git(work, "clone", "-q", join(fixtures, "six.bundle"), join("clones", "benjaminp__six"));
      git(
        work,
        "clone",
        "-q",
        join(fixtures, "more-itertools.bundle"),
        join("clones", "more-itertools__more-itertools"),
      );
      copyFileSync(join(fixtures, "tasks.jsonl"), join(work, "tasks.jsonl"));
      const loader = `load=${encodeURIComponent(`bash ${join(process.cwd(), "scripts/kube/cluster.sh")} load`)}`;
      const run = await drydock(work, [
        "eval",
        "tasks.jsonl",
        "--agent",
        "patch",
        "--image",
        inject("sandboxImage"),
        "--engine",
        `${ns.target}&${loader}`,
        "--concurrency",
        "4",
        // Each node has two CPUs to give: four boxes of 0.5 leave room for the grading boxes.
        "--cpus",
        "0.5",
        "--out",
        "out",
      ]);
      expect(run.code, run.stderr).toBe(0);
      const results = JSON.parse(readFileSync(join(work, "out", "results.json"), "utf8")) as {
        tasks: Array<{ id: string; status: string }>;
      };
      expect(Object.fromEntries(results.tasks.map((t) => [t.id, t.status]))).toEqual({
        "six-gold": "resolved",
        "six-empty": "unresolved",
        "six-wrong": "unresolved",
        "six-cheat": "unresolved",
        "more-itertools-gold": "resolved",
        "more-itertools-empty": "unresolved",
        "more-itertools-wrong": "unresolved",
        "more-itertools-cheat": "unresolved",
      });
      const nodes = new Set<string>();
      for (const task of readdirSync(join(work, "out", "tasks"))) {
        const result = JSON.parse(readFileSync(join(work, "out", "tasks", task, "result.json"), "utf8")) as {
          engine?: string;
          node?: string;
          prediction?: string;
        };
        expect(result.engine).toBe(ns.target.replace(/\?.*$/, ""));
        // An empty prediction is not run: no box, no node.
        if (result.prediction !== "empty") nodes.add(result.node ?? "none");
      }
      const clusterNodes = (await ns.core.listNode()).items.map((n) => n.metadata!.name!).sort();
      expect([...nodes].sort()).toEqual(clusterNodes);
      expect(await ns.pods()).toEqual([]);
    } finally {
      rmSync(work, { recursive: true, force: true });
    }
  });
});
