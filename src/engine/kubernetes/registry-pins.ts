/**
 * The images a cluster's Pods name: a reference with a registry host is pinned to the digest its
 * registry gives (registry-manifest.ts), asked once per process, so every node runs the same
 * bytes and a tag pushed again while drydock runs changes no box (restart it, or name the image
 * by digest). A registry without the manifest is asked again next time.
 */
import { parseImageReference } from "../image-reference.js";
import { byDigest, manifestDigest, namesRegistry } from "../registry-manifest.js";

export class RegistryPins {
  private readonly digests = new Map<string, Promise<string | undefined>>();

  /** The digest the registry gives `ref`; undefined when it has no such manifest or `ref` names no registry. */
  digest(ref: string): Promise<string | undefined> {
    if (!namesRegistry(ref)) return Promise.resolve(undefined);
    let digest = this.digests.get(ref);
    if (!digest) {
      digest = manifestDigest(ref);
      this.digests.set(ref, digest);
      digest.then(
        (found) => {
          if (!found) this.digests.delete(ref);
        },
        () => this.digests.delete(ref),
      );
    }
    return digest;
  }

  /**
   * The image a Pod names: by digest (`name@sha256:…`) when the reference names a registry that
   * answers; else the reference as given (an image imported onto the nodes, which no registry
   * serves), with `onUnasked` told why the registry could not be asked.
   */
  async podImage(ref: string, onUnasked: (why: string) => void): Promise<string> {
    if (!namesRegistry(ref) || parseImageReference(ref)?.digest) return ref;
    try {
      const digest = await this.digest(ref);
      return digest ? byDigest(ref, digest) : ref;
    } catch (error) {
      onUnasked((error as Error).message);
      return ref;
    }
  }
}
