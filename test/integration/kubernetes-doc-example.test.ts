/**
 * docs/kubernetes.md's example, run as written against the built code: it prints a Pod and a
 * NetworkPolicy the Kubernetes API schemas accept.
 */
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { KUBERNETES_VERSIONS, schemaErrors } from "../helpers/kubernetes-schema.js";

describe("docs/kubernetes.md", () => {
  it("prints, as written, a Pod and a NetworkPolicy the Kubernetes API schemas accept", () => {
    const doc = readFileSync(join(process.cwd(), "docs", "kubernetes.md"), "utf8");
    const blocks = [...doc.matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => m[1]!);
    expect(blocks).toHaveLength(1);
    const ran = spawnSync("bash", ["-e", "-c", blocks[0]!], { cwd: process.cwd(), encoding: "utf8" });
    expect(ran.stderr).toBe("");
    expect(ran.status).toBe(0);
    const [pod, policy] = JSON.parse(ran.stdout) as [
      { kind: string; spec: { runtimeClassName?: string; volumes: Array<Record<string, unknown>> } },
      { kind: string },
    ];
    expect(pod.kind).toBe("Pod");
    expect(pod.spec.runtimeClassName).toBe("gvisor");
    // No volume of the host: every one is an emptyDir of the Pod's memory.
    expect(pod.spec.volumes.length).toBeGreaterThan(0);
    expect(pod.spec.volumes.filter((v) => Object.keys(v).sort().join() !== "emptyDir,name")).toEqual([]);
    expect(policy.kind).toBe("NetworkPolicy");
    for (const version of KUBERNETES_VERSIONS) {
      expect(schemaErrors("Pod", version, pod)).toEqual([]);
      expect(schemaErrors("NetworkPolicy", version, policy)).toEqual([]);
    }
  });
});
