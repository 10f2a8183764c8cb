/**
 * A box's own deadline on the cluster: `deadline=SECONDS` in the `--engine` target becomes each
 * Pod's activeDeadlineSeconds, and Kubernetes ends the box then, with nothing from drydock.
 */
import { describe, expect, it } from "vitest";
import { LABEL_SESSION } from "../../src/engine/labels.js";
import { KubernetesEngine } from "../../src/engine/kubernetes/kubernetes-engine.js";
import { parseKubernetesTarget } from "../../src/engine/kubernetes/kubernetes-target.js";
import { boxSpec } from "../../src/sandbox/box-profile.js";
import { testNamespace } from "../helpers/kube.js";
import { sandboxImage } from "../helpers/sessions.js";

describe("a box's deadline on the cluster", () => {
  it("ends the box at the deadline the --engine target gives", async () => {
    await using ns = await testNamespace("deadline");
    const engine = await KubernetesEngine.connect(parseKubernetesTarget(`${ns.target}&deadline=10`), {
      appArmor: false,
    });
    try {
      const id = await engine.createBox(
        boxSpec(
          { image: sandboxImage(), memoryMB: 256, cpus: 0.25, labels: { [LABEL_SESSION]: "deadline" } },
          `drydock-deadline-${process.pid}`,
        ),
      );
      await engine.start(id);
      const pod = await ns.core.readNamespacedPod({ name: id, namespace: ns.name });
      expect(pod.spec?.activeDeadlineSeconds).toBe(10);
      await expect
        .poll(
          async () => (await ns.core.readNamespacedPod({ name: id, namespace: ns.name })).status?.reason,
          {
            timeout: 90_000,
            interval: 1_000,
          },
        )
        .toBe("DeadlineExceeded");
      expect(await engine.isRunning(id)).toBe(false);
    } finally {
      await engine.close();
    }
  });

  it("refuses a deadline that is not whole seconds, naming the word and the range", () => {
    for (const bad of ["0", "-5", "1.5", "10s", "99999999999"]) {
      expect(() => parseKubernetesTarget(`kubernetes:ns?deadline=${bad}`)).toThrow(
        /deadline takes whole seconds from 1 to 31622400 \(a year\)/,
      );
    }
  });
});
