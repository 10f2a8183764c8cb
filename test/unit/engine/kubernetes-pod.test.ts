import { describe, expect, it } from "vitest";
import type { ContainerSpec } from "../../../src/engine/container-spec.js";
import { boxLabelsOf, labelSelectorValue } from "../../../src/engine/kubernetes/kubernetes-metadata.js";
import { cpuQuantity, mebibytes } from "../../../src/engine/kubernetes/kubernetes-quantity.js";
import {
  ANNOTATION_NOFILE,
  ANNOTATION_PIDS_LIMIT,
  podFor,
  QUIET_FIRST_PROCESS,
  TERMINATION_MESSAGE_PATH,
  type Pod,
} from "../../../src/engine/kubernetes/pod-manifest.js";
import { LABEL_CREATED, LABEL_OWNER, LABEL_SESSION, LABEL_STATE } from "../../../src/engine/labels.js";
import { boxSpec, DEFAULT_LIMITS, RUN_DIR_IN_BOX, WORKSPACE } from "../../../src/sandbox/box-profile.js";
import { InvalidArgumentError } from "../../../src/util/errors.js";
import { KUBERNETES_VERSIONS, schemaErrors } from "../../helpers/kubernetes-schema.js";

const NAMESPACE = "drydock-boxes";
// Kubernetes' own rules (k8s.io/apimachinery validation), written out here rather than taken
// from the code under test.
const LABEL_VALUE = /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/;
const QUANTITY = /^[+-]?(\d+(\.\d*)?|\.\d+)(([KMGTPE]i)|[numkMGTPE]|([eE][-+]?\d+))?$/;

/** A box's spec as Box.create makes it: the default profile and drydock's labels. */
function sessionSpec(overrides: Partial<ContainerSpec> = {}): ContainerSpec {
  const spec = boxSpec(
    {
      image: "drydock-sandbox:3f2a9c1d",
      labels: {
        [LABEL_SESSION]: "3f2a9c1d0e4b",
        [LABEL_OWNER]: "build-host/4242/918273",
        [LABEL_STATE]: "/home/dev/.local/state/drydock",
        [LABEL_CREATED]: "2025-06-01T12:34:56.789Z",
      },
    },
    "drydock-3f2a9c1d0e4b",
  );
  return { ...spec, ...overrides };
}

/** A session's spec with an egress allowlist (its CA bundle's directory is one more tmpfs). */
function boxSpecWithEgress(): ContainerSpec {
  return boxSpec({ image: "drydock-sandbox:3f2a9c1d", egress: ["pypi.org"] }, "drydock-3f2a9c1d0e4b");
}

function clone(pod: Pod): Pod {
  return structuredClone(pod);
}

describe("podFor", () => {
  it("names the pull secrets it is given, and none otherwise", () => {
    const pod = podFor(sessionSpec(), { namespace: NAMESPACE, imagePullSecrets: ["registry-pull"] });
    expect(pod.spec.imagePullSecrets).toEqual([{ name: "registry-pull" }]);
    expect(podFor(sessionSpec(), { namespace: NAMESPACE }).spec.imagePullSecrets).toBeUndefined();
    expect(
      podFor(sessionSpec(), { namespace: NAMESPACE, imagePullSecrets: [] }).spec.imagePullSecrets,
    ).toBeUndefined();
  });

  for (const version of KUBERNETES_VERSIONS) {
    it(`makes a Pod the Kubernetes ${version} API schema accepts, for each way a box is made`, () => {
      const pods = [
        podFor(sessionSpec(), { namespace: NAMESPACE }),
        podFor(sessionSpec({ runtime: "runsc" }), { namespace: NAMESPACE, activeDeadlineSeconds: 86_400 }),
        podFor(sessionSpec({ capAdd: ["CAP_NET_BIND_SERVICE"], cpus: 1.5, readOnlyRootfs: false }), {
          namespace: NAMESPACE,
          appArmor: false,
          imagePullPolicy: "Never",
        }),
        podFor(boxSpecWithEgress(), {
          namespace: NAMESPACE,
          ownerLease: { name: "drydock-build-host-4242", uid: "6f1c2a54-8d1e-4b7a-9c3f-2e5d8a7b1c90" },
        }),
        podFor(sessionSpec({ image: `registry.example.com/team/sandbox@sha256:${"e".repeat(64)}` }), {
          namespace: NAMESPACE,
          imagePullSecrets: ["registry-pull", "mirror.pull"],
        }),
      ];
      for (const pod of pods) expect(schemaErrors("Pod", version, pod)).toEqual([]);
    });

    it(`fails the ${version} schema once a field has the wrong type or name`, () => {
      const pod = podFor(sessionSpec(), { namespace: NAMESPACE });
      expect(schemaErrors("Pod", version, pod)).toEqual([]);

      const textUid = clone(pod) as unknown as { spec: { securityContext: { runAsUser: unknown } } };
      textUid.spec.securityContext.runAsUser = "1000";
      expect(schemaErrors("Pod", version, textUid).join("\n")).toMatch(/runAsUser must be integer/);

      const misspelt = clone(pod) as unknown as { spec: { containers: Array<Record<string, unknown>> } };
      misspelt.spec.containers[0]!.securityContex = misspelt.spec.containers[0]!.securityContext;
      expect(schemaErrors("Pod", version, misspelt).join("\n")).toMatch(/additional properties/);

      const dropText = clone(pod) as unknown as {
        spec: { containers: Array<{ securityContext: { capabilities: { drop: unknown } } }> };
      };
      dropText.spec.containers[0]!.securityContext.capabilities.drop = "ALL";
      expect(schemaErrors("Pod", version, dropText).join("\n")).toMatch(/capabilities\/drop must be array/);

      const noContainers = clone(pod) as unknown as { spec: Record<string, unknown> };
      delete noContainers.spec.containers;
      expect(schemaErrors("Pod", version, noContainers).join("\n")).toMatch(/containers/);
    });
  }

  it("carries every part of drydock's hardening into the Pod and its box container", () => {
    const pod = podFor(sessionSpec(), { namespace: NAMESPACE });
    const box = pod.spec.containers[0]!;
    expect(pod.spec.containers).toHaveLength(1);
    expect(pod.spec.securityContext).toEqual({
      runAsUser: 1000,
      runAsGroup: 1000,
      runAsNonRoot: true,
      seccompProfile: { type: "RuntimeDefault" },
      appArmorProfile: { type: "RuntimeDefault" },
    });
    expect(box.securityContext).toEqual({
      privileged: false,
      readOnlyRootFilesystem: true,
      allowPrivilegeEscalation: false,
      capabilities: { drop: ["ALL"] },
    });
    expect(pod.spec).toMatchObject({
      automountServiceAccountToken: false,
      enableServiceLinks: false,
      hostNetwork: false,
      hostPID: false,
      hostIPC: false,
      shareProcessNamespace: true,
      restartPolicy: "Never",
    });
    expect(pod.spec.runtimeClassName).toBeUndefined();
    expect(box.resources.limits).toEqual({ cpu: "1", memory: `${DEFAULT_LIMITS.memoryMB}Mi` });
    expect(box.resources.requests).toEqual(box.resources.limits);
    // The command runs with its streams on /dev/null: nothing the box writes to them is logged.
    expect(box.command).toEqual(["sh", "-c", QUIET_FIRST_PROCESS, "drydock-box", "sleep", "infinity"]);
    expect(box).not.toHaveProperty("args");
    expect(box.terminationMessagePath).toBe(TERMINATION_MESSAGE_PATH);
    expect(box.workingDir).toBe(WORKSPACE);
    expect(box.env).toContainEqual({ name: "HOME", value: "/home/agent" });
    expect(pod.metadata.annotations).toMatchObject({
      [ANNOTATION_PIDS_LIMIT]: String(DEFAULT_LIMITS.pidsLimit),
      [ANNOTATION_NOFILE]: "4096",
    });
  });

  it("gives each tmpfs mount a memory-backed emptyDir of its size, and no volume of the host", () => {
    const pod = podFor(sessionSpec(), { namespace: NAMESPACE });
    const mounts = pod.spec.containers[0]!.volumeMounts;
    const volumeAt = (path: string) => {
      const mount = mounts.find((m) => m.mountPath === path);
      return { mount, volume: pod.spec.volumes.find((v) => v.name === mount?.name) };
    };
    expect(volumeAt(WORKSPACE).volume?.emptyDir).toEqual({
      medium: "Memory",
      sizeLimit: `${DEFAULT_LIMITS.workspaceMB}Mi`,
    });
    expect(volumeAt("/tmp").volume?.emptyDir).toEqual({
      medium: "Memory",
      sizeLimit: `${DEFAULT_LIMITS.tmpMB}Mi`,
    });
    expect(volumeAt("/home/agent").volume?.emptyDir?.medium).toBe("Memory");
    // No host path, with or without egress: every volume is a memory-backed emptyDir.
    expect(volumeAt(RUN_DIR_IN_BOX).volume).toBeUndefined();
    for (const p of [pod, podFor(boxSpecWithEgress(), { namespace: NAMESPACE })]) {
      expect(p.spec.volumes.every((v) => Object.keys(v).sort().join() === "emptyDir,name")).toBe(true);
    }
    const withEgress = podFor(boxSpecWithEgress(), { namespace: NAMESPACE });
    const run = withEgress.spec.volumes.find(
      (v) =>
        v.name ===
        withEgress.spec.containers[0]?.volumeMounts.find((m) => m.mountPath === RUN_DIR_IN_BOX)?.name,
    );
    expect(run?.emptyDir).toEqual({ medium: "Memory", sizeLimit: "4Mi" });
  });

  it("makes the box a dependent of its drydock's Lease when given one, and of nothing otherwise", () => {
    const lease = { name: "drydock-build-host-4242", uid: "6f1c2a54-8d1e-4b7a-9c3f-2e5d8a7b1c90" };
    const owned = podFor(sessionSpec(), { namespace: NAMESPACE, ownerLease: lease });
    expect(owned.metadata.ownerReferences).toEqual([
      { apiVersion: "coordination.k8s.io/v1", kind: "Lease", ...lease },
    ]);
    expect(podFor(sessionSpec(), { namespace: NAMESPACE }).metadata.ownerReferences).toBeUndefined();
  });

  it("runs a runsc box under the gvisor RuntimeClass, or the one the options name", () => {
    expect(podFor(sessionSpec({ runtime: "runsc" }), { namespace: NAMESPACE }).spec.runtimeClassName).toBe(
      "gvisor",
    );
    const kata = podFor(sessionSpec({ runtime: "kata" }), {
      namespace: NAMESPACE,
      runtimeClasses: { kata: "kata-qemu" },
    });
    expect(kata.spec.runtimeClassName).toBe("kata-qemu");
  });

  it("keeps every label selectable and gives back drydock's values from the annotations", () => {
    const spec = sessionSpec();
    const { metadata } = podFor(spec, { namespace: NAMESPACE });
    expect(metadata.name).toBe("drydock-3f2a9c1d0e4b");
    expect(metadata.namespace).toBe(NAMESPACE);
    for (const value of Object.values(metadata.labels)) {
      expect(value.length).toBeLessThanOrEqual(63);
      expect(value).toMatch(LABEL_VALUE);
    }
    // A session id is a label value as it is; an owner ("host/pid/ticks") is not.
    expect(metadata.labels[LABEL_SESSION]).toBe("3f2a9c1d0e4b");
    expect(metadata.labels[LABEL_OWNER]).not.toBe(spec.labels[LABEL_OWNER]);
    expect(metadata.labels[LABEL_OWNER]).toBe(labelSelectorValue(spec.labels[LABEL_OWNER]!));
    expect(metadata.annotations?.[LABEL_OWNER]).toBe(spec.labels[LABEL_OWNER]);
    expect(boxLabelsOf(metadata)).toEqual(spec.labels);
  });

  it("writes resource quantities as Kubernetes parses them", () => {
    expect(cpuQuantity(1)).toBe("1");
    expect(cpuQuantity(2)).toBe("2");
    expect(cpuQuantity(1.5)).toBe("1500m");
    expect(cpuQuantity(0.25)).toBe("250m");
    expect(mebibytes(2048, "memoryMB")).toBe("2048Mi");
    const pod = podFor(sessionSpec({ cpus: 0.75 }), { namespace: NAMESPACE });
    const quantities = [
      ...Object.values(pod.spec.containers[0]!.resources.limits),
      ...pod.spec.volumes.flatMap((v) => (v.emptyDir ? [v.emptyDir.sizeLimit] : [])),
    ];
    for (const q of quantities) expect(q).toMatch(QUANTITY);
  });

  it("refuses what Kubernetes cannot give, naming the field and the fix", () => {
    const refusal = (spec: ContainerSpec, options = {}) => {
      try {
        podFor(spec, { namespace: NAMESPACE, ...options });
      } catch (error) {
        expect(error).toBeInstanceOf(InvalidArgumentError);
        return (error as Error).message;
      }
      throw new Error("podFor accepted it");
    };
    expect(refusal(sessionSpec({ network: "bridge" }))).toMatch(/^network: "bridge" is a Docker network/);
    expect(refusal(sessionSpec({ user: "agent" }))).toMatch(/^user: .*give "1000"/);
    expect(refusal(sessionSpec({ runtime: "kata" }))).toMatch(/^runtime: .*runtimeClasses \(known: runsc\)/);
    expect(refusal(sessionSpec({ name: "Drydock_Box" }))).toMatch(/^name: .*lower-case letters/);
    expect(refusal(sessionSpec({ name: undefined }))).toMatch(/^name: a box on Kubernetes needs a name/);
    expect(refusal(sessionSpec({ cpus: 0 }))).toMatch(/^cpus: /);
    expect(refusal(sessionSpec({ memoryMB: 0.5 }))).toMatch(/^memoryMB: .*whole MiB/);
    expect(refusal(sessionSpec({ capAdd: ["SYS_ADMIN"] }))).toMatch(/^capAdd: .*allowNewPrivileges/);
    expect(refusal(sessionSpec({ labels: { "bad key!": "x" } }))).toMatch(/^labels\.bad key!: /);
    expect(refusal(sessionSpec(), { namespace: "Boxes" })).toMatch(/^namespace: /);
  });
});

/**
 * The Pod Security Standards' "restricted" level (kubernetes.io/docs/concepts/security/pod-security-standards),
 * as far as the fields drydock sets reach: what a namespace labelled
 * `pod-security.kubernetes.io/enforce: restricted` would refuse, in words.
 */
function restrictedViolations(pod: Pod): string[] {
  const out: string[] = [];
  const allowedVolumes = [
    "configMap",
    "csi",
    "downwardAPI",
    "emptyDir",
    "ephemeral",
    "persistentVolumeClaim",
    "projected",
    "secret",
  ];
  for (const volume of pod.spec.volumes) {
    for (const kind of Object.keys(volume).filter((k) => k !== "name")) {
      if (!allowedVolumes.includes(kind)) out.push(`volume ${volume.name} is ${kind}`);
    }
  }
  if (pod.spec.hostNetwork || pod.spec.hostPID || pod.spec.hostIPC) out.push("host namespaces");
  const seccomp = pod.spec.securityContext.seccompProfile?.type;
  if (seccomp !== "RuntimeDefault" && seccomp !== "Localhost") out.push("seccomp");
  if (pod.spec.securityContext.runAsNonRoot !== true || pod.spec.securityContext.runAsUser === 0)
    out.push("root");
  for (const c of pod.spec.containers) {
    const sc = c.securityContext;
    if (sc.privileged) out.push(`${c.name} privileged`);
    if (sc.allowPrivilegeEscalation !== false) out.push(`${c.name} may escalate`);
    if (!sc.capabilities.drop.includes("ALL")) out.push(`${c.name} keeps capabilities`);
    for (const cap of sc.capabilities.add ?? [])
      if (cap !== "NET_BIND_SERVICE") out.push(`${c.name} adds ${cap}`);
  }
  return out;
}

describe("podFor and Pod Security", () => {
  it("meets the restricted level as made, with or without egress", () => {
    expect(restrictedViolations(podFor(sessionSpec({ runtime: "runsc" }), { namespace: NAMESPACE }))).toEqual(
      [],
    );
    expect(restrictedViolations(podFor(sessionSpec(), { namespace: NAMESPACE }))).toEqual([]);
    expect(restrictedViolations(podFor(boxSpecWithEgress(), { namespace: NAMESPACE }))).toEqual([]);
  });

  it("keeps the relaxations a caller asked for visible to Pod Security", () => {
    const relaxed = podFor(sessionSpec({ capAdd: ["NET_ADMIN"], noNewPrivileges: false }), {
      namespace: NAMESPACE,
    });
    expect(restrictedViolations(relaxed)).toEqual(["box may escalate", "box adds NET_ADMIN"]);
  });
});
