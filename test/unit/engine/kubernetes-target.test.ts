import { describe, expect, it } from "vitest";
import { normalImageName } from "../../../src/engine/kubernetes/cluster-nodes.js";
import { cpusOf, mebibytesOf, quantityValue } from "../../../src/engine/kubernetes/kubernetes-quantity.js";
import {
  isKubernetesTarget,
  parseKubernetesTarget,
} from "../../../src/engine/kubernetes/kubernetes-target.js";
import { leaseExpired } from "../../../src/engine/kubernetes/owner-lease.js";
import { podFor } from "../../../src/engine/kubernetes/pod-manifest.js";
import { boxSpec } from "../../../src/sandbox/box-profile.js";

describe("--engine kubernetes:…", () => {
  it("reads the namespace, context, kubeconfig and apparmor words", () => {
    expect(parseKubernetesTarget("kubernetes:")).toEqual({
      name: "kubernetes:drydock-boxes",
      namespace: "drydock-boxes",
    });
    expect(parseKubernetesTarget("k8s:agents")).toMatchObject({ namespace: "agents" });
    expect(
      parseKubernetesTarget("kubernetes:agents?context=lab%2Fwest&kubeconfig=%2Fetc%2Fk.conf&apparmor=off"),
    ).toEqual({
      name: "kubernetes:agents?context=lab/west",
      namespace: "agents",
      context: "lab/west",
      kubeconfig: "/etc/k.conf",
      appArmor: false,
    });
    expect(parseKubernetesTarget("kubernetes:agents?pull-secret=reg&pull-secret=mirror.pull")).toMatchObject({
      pullSecrets: ["reg", "mirror.pull"],
    });
    expect(isKubernetesTarget("kubernetes:x")).toBe(true);
    expect(isKubernetesTarget("unix:///var/run/docker.sock")).toBe(false);
  });

  it("refuses what is not a namespace or a known word, naming the flag and the forms", () => {
    const bad = (url: string) => () => parseKubernetesTarget(url);
    expect(bad("kubernetes:Agents")).toThrow(/--engine: "Agents" is not a namespace name/);
    expect(bad("kubernetes:a/b")).toThrow(/not a namespace name/);
    expect(bad("kubernetes:../etc")).toThrow(/not a namespace name/);
    expect(bad(`kubernetes:${"a".repeat(64)}`)).toThrow(/not a namespace name/);
    expect(bad("kubernetes:x?token=abc")).toThrow(/unknown word "token"; write kubernetes:/);
    expect(bad("kubernetes:x?context=")).toThrow(/context needs a value/);
    expect(bad("kubernetes:x?kubeconfig=%zz")).toThrow(/malformed %-escape/);
    expect(bad("kubernetes:x?context=a%0Ab")).toThrow(/control character/);
    expect(bad("kubernetes:x?apparmor=maybe")).toThrow(/apparmor takes on or off/);
    expect(bad("kubernetes:x?pull-secret=Reg")).toThrow(/pull-secret takes the name of a Secret/);
    expect(bad("kubernetes:x?pull-secret=a%2Fb")).toThrow(/pull-secret takes the name of a Secret/);
  });
});

describe("quantities as the API reports them", () => {
  it("reads cores, millicores, binary and decimal suffixes and exponents", () => {
    expect(cpusOf("2")).toBe(2);
    expect(cpusOf("1500m")).toBe(1.5);
    expect(mebibytesOf("24Gi")).toBe(24 * 1024);
    expect(mebibytesOf("25165824Ki")).toBe(24 * 1024);
    expect(mebibytesOf("1G")).toBe(953);
    expect(quantityValue("1e3")).toBe(1000);
    expect(cpusOf("lots")).toBe(0);
    expect(mebibytesOf("")).toBe(0);
  });
});

describe("image names as nodes report them", () => {
  it("adds Docker Hub's domain and library path, and :latest", () => {
    expect(normalImageName("drydock-sandbox:abc")).toBe("docker.io/library/drydock-sandbox:abc");
    expect(normalImageName("team/box")).toBe("docker.io/team/box:latest");
    expect(normalImageName("registry.example.com:5000/team/box:1")).toBe(
      "registry.example.com:5000/team/box:1",
    );
    expect(normalImageName("localhost/pause:v1")).toBe("localhost/pause:v1");
    expect(normalImageName("box@sha256:" + "a".repeat(64))).toBe("box@sha256:" + "a".repeat(64));
  });
});

describe("owner leases", () => {
  it("count as a dead drydock's after three durations without renewal", () => {
    const now = Date.parse("2026-01-01T00:10:00Z");
    const lease = (renewed: string) => ({ spec: { renewTime: new Date(renewed), leaseDurationSeconds: 30 } });
    expect(leaseExpired(lease("2026-01-01T00:09:00Z"), now)).toBe(false);
    expect(leaseExpired(lease("2026-01-01T00:08:29Z"), now)).toBe(true);
    expect(leaseExpired({}, now)).toBe(true);
  });
});

describe("a box's Pod and git", () => {
  it("names each memory-backed root safe for git, since Kubernetes makes them root's", () => {
    const pod = podFor(boxSpec({ image: "i", labels: { "drydock.session": "s1" } }, "drydock-s1"), {
      namespace: "n",
    });
    const env = Object.fromEntries(pod.spec.containers[0]!.env.map((e) => [e.name, e.value]));
    const count = Number(env.GIT_CONFIG_COUNT);
    const safe = Array.from({ length: count }, (_, i) => [
      env[`GIT_CONFIG_KEY_${i}`],
      env[`GIT_CONFIG_VALUE_${i}`],
    ]);
    expect(safe).toContainEqual(["safe.directory", "/workspace"]);
    expect(safe.every(([key]) => key === "safe.directory")).toBe(true);
  });
});
