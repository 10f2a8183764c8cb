/**
 * What the Kubernetes backend reads of a cluster's nodes: which are Ready for boxes, the images
 * each reports (the kubelet lists them in its status), what they can hold, and how a configured
 * loader puts a local image on them.
 */
import { execFile } from "node:child_process";
import type { CoreV1Api, V1Node } from "@kubernetes/client-node";
import { DrydockError } from "../../util/errors.js";
import { cpusOf, mebibytesOf } from "./kubernetes-quantity.js";

/** The image name as a node reports it: `docker.io/library/` added to a short name, `:latest` to no tag. */
export function normalImageName(ref: string): string {
  if (ref.includes("@")) return ref;
  const slash = ref.indexOf("/");
  const first = slash < 0 ? "" : ref.slice(0, slash);
  const domain = first.includes(".") || first.includes(":") || first === "localhost";
  let name = domain ? ref : `docker.io/${slash < 0 ? "library/" : ""}${ref}`;
  if (!/:[^/]+$/.test(name)) name += ":latest";
  return name;
}

/** The nodes boxes may go to: Ready and not cordoned. */
export async function readyNodes(core: CoreV1Api): Promise<V1Node[]> {
  const list = await core.listNode();
  return list.items.filter(
    (n) =>
      !n.spec?.unschedulable && n.status?.conditions?.some((c) => c.type === "Ready" && c.status === "True"),
  );
}

/** Whether every node reports the image; no node has none. */
export function nodesHaveImage(nodes: readonly V1Node[], ref: string): boolean {
  const want = normalImageName(ref);
  return (
    nodes.length > 0 &&
    nodes.every((node) =>
      (node.status?.images ?? []).some((image) =>
        (image.names ?? []).some((n) => normalImageName(n) === want),
      ),
    )
  );
}

/** The nodes' allocatable CPU and memory, folded by `fold` (Math.max: the largest node; a sum: all). */
export function nodesCapacity(
  nodes: readonly V1Node[],
  fold: (a: number, b: number) => number,
): { cpus: number; memoryMB: number } {
  let cpus = 0;
  let memoryMB = 0;
  for (const node of nodes) {
    cpus = fold(cpus, cpusOf(node.status?.allocatable?.cpu ?? "0"));
    memoryMB = fold(memoryMB, mebibytesOf(node.status?.allocatable?.memory ?? "0"));
  }
  return { cpus, memoryMB };
}

/**
 * Runs `loader` with the image as its last argument (no shell), then waits up to 60 s until
 * `present` says the nodes report it.
 */
export async function runLoader(
  loader: readonly string[],
  ref: string,
  present: () => Promise<boolean>,
): Promise<void> {
  await new Promise<void>((resolve, reject) => {
    execFile(
      loader[0]!,
      [...loader.slice(1), ref],
      { timeout: 30 * 60_000, maxBuffer: 16 * 1024 * 1024 },
      (error, _out, err) =>
        error
          ? reject(
              new DrydockError(
                "image_missing",
                `${loader.join(" ")} ${ref} failed: ${String(err).trim().split("\n").slice(-3).join(" ") || error.message}`,
              ),
            )
          : resolve(),
    );
  });
  const deadline = Date.now() + 60_000;
  while (!(await present())) {
    if (Date.now() > deadline) {
      throw new DrydockError(
        "image_missing",
        `${loader.join(" ")} ${ref} ran, but the nodes did not report ${ref} within 60 s`,
      );
    }
    await new Promise((resolve) => setTimeout(resolve, 1_000));
  }
}
