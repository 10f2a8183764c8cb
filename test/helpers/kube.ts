import { CoreV1Api, KubeConfig, type V1Pod } from "@kubernetes/client-node";
import { inject } from "vitest";
import { KubernetesEngine } from "../../src/engine/kubernetes/kubernetes-engine.js";
import { parseKubernetesTarget } from "../../src/engine/kubernetes/kubernetes-target.js";

/** The test cluster's admin kubeconfig (kube-setup.ts brought the cluster up). */
export function kubeconfigPath(): string {
  return process.env.KUBECONFIG_TEST ?? inject("kubeconfig");
}

export function kubeConfig(): KubeConfig {
  const kc = new KubeConfig();
  kc.loadFromFile(kubeconfigPath());
  return kc;
}

export interface TestNamespace extends AsyncDisposable {
  name: string;
  core: CoreV1Api;
  /** The `--engine` value for this namespace (the test cluster has no AppArmor). */
  target: string;
  /** A backend on this namespace; closed with the namespace. */
  engine(): Promise<KubernetesEngine>;
  pods(): Promise<V1Pod[]>;
}

/** A namespace of this test's own, deleted (with every object in it) on dispose. */
export async function testNamespace(label: string): Promise<TestNamespace> {
  const kc = kubeConfig();
  const core = kc.makeApiClient(CoreV1Api);
  const name = `drydock-t-${label}-${process.pid}`.slice(0, 63).replace(/-+$/, "");
  await core.createNamespace({ body: { metadata: { name, labels: { "drydock.test": "1" } } } });
  const target = `kubernetes:${name}?kubeconfig=${encodeURIComponent(kubeconfigPath())}&apparmor=off`;
  const engines: KubernetesEngine[] = [];
  return {
    name,
    core,
    target,
    async engine() {
      const t = parseKubernetesTarget(target);
      const engine = await KubernetesEngine.connect(t, { appArmor: t.appArmor });
      engines.push(engine);
      return engine;
    },
    async pods() {
      return (await core.listNamespacedPod({ namespace: name })).items;
    },
    async [Symbol.asyncDispose]() {
      await Promise.allSettled(engines.map((e) => e.close()));
      await core.deleteNamespace({ name, gracePeriodSeconds: 0 }).catch(() => undefined);
    },
  };
}
