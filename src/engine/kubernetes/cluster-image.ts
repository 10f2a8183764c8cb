/** A cluster whose nodes lack an image: how to get it there. */
import { DrydockError } from "../../util/errors.js";
import { namesRegistry } from "../registry-manifest.js";

export function clusterImageMissing(backend: string, image: string): DrydockError {
  if (namesRegistry(image)) {
    const registry = image.split("/")[0]!;
    return new DrydockError(
      "image_missing",
      `image ${image} is neither in its registry (${registry} has no such manifest) nor on every Ready node of ${backend}: push it there (drydock image push ${image.replace(/@.*$/, "")} --image LOCAL_IMAGE) and pass the name it prints with --image (docs/kubernetes.md, Images)`,
    );
  }
  return new DrydockError(
    "image_missing",
    `image ${image} is not on every Ready node of ${backend}; push it to the registry the nodes pull from and pass that name with --image, import it into each node's runtime (the test cluster: scripts/kube/cluster.sh load ${image}), or name a loader in the engine: kubernetes:NAMESPACE?load=COMMAND (docs/kubernetes.md)`,
  );
}
