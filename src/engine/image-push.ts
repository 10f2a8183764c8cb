/**
 * Pushes a local image to a registry through the Docker Engine, as `docker push` does, and
 * returns the reference by digest the registry gave it (`registry/path@sha256:…`): the name a
 * cluster's Pods use, so every node runs the same bytes (docs/kubernetes.md, Images). The
 * credentials come from the client configuration (registry-auth.ts) and go to the engine for this
 * push only.
 */
import { DrydockError, InvalidArgumentError } from "../util/errors.js";
import { logger } from "../util/log.js";
import type { Engine } from "./engine.js";
import { parseImageReference } from "./image-reference.js";
import { PullProgress, type PullEvent } from "./pull-progress.js";
import { registryAuth } from "./registry-auth.js";

const log = logger("engine");

interface PushEvent extends PullEvent {
  aux?: { Tag?: string; Digest?: string; Size?: number };
}

export interface PushedImage {
  /** Where it went, with its tag: `127.0.0.1:5000/drydock-sandbox:9efb80f03e19`. */
  tagged: string;
  /** The same image by digest: `127.0.0.1:5000/drydock-sandbox@sha256:…`. */
  byDigest: string;
  digest: string;
}

/**
 * Reads the push's target: a registry host must be named (`HOST[:PORT]/PATH[:TAG]`), so an image
 * never goes to Docker Hub by a name that only looks local; no digest (the registry gives it).
 * The tag defaults to the source's own.
 */
export function pushTarget(target: string, sourceTag: string | undefined): { repo: string; tag: string } {
  const parsed = parseImageReference(target);
  const fix =
    "write REGISTRY/PATH[:TAG], e.g. 127.0.0.1:5000/drydock-sandbox or registry.example.com/team/drydock-sandbox:1";
  if (!parsed)
    throw new InvalidArgumentError("target", `${JSON.stringify(target)} is not an image name: ${fix}`);
  if (parsed.digest) {
    throw new InvalidArgumentError(
      "target",
      `${target} names a digest; the registry gives the digest: ${fix}`,
    );
  }
  const first = target.split("/")[0]!;
  if (!target.includes("/") || !(/[.:]/.test(first) || first === "localhost")) {
    throw new InvalidArgumentError("target", `${target} names no registry host: ${fix}`);
  }
  const tag = parsed.tag ?? sourceTag ?? "latest";
  const repo = parsed.tag !== undefined ? target.slice(0, target.lastIndexOf(":")) : target;
  return { repo, tag };
}

/** The tag of a local reference (`drydock-sandbox:9efb80f03e19` → `9efb80f03e19`). */
function tagOf(ref: string): string | undefined {
  return parseImageReference(ref)?.tag;
}

export async function pushImage(
  engine: Engine,
  source: string,
  target: string,
  onLine: (line: string) => void = () => undefined,
): Promise<PushedImage> {
  const { repo, tag } = pushTarget(target, tagOf(source));
  const tagged = `${repo}:${tag}`;
  if (!(await engine.imageId(source))) {
    throw new DrydockError(
      "image_missing",
      `the engine has no image ${source} to push: build it first (drydock image build, or drydock env build)`,
    );
  }
  await engine.tag(source, tagged);
  const registry = parseImageReference(tagged)!.registry;
  const auth = await registryAuth(registry);
  log.info(
    `pushing ${source} to ${tagged}${auth ? ` (with the client configuration's credentials for ${registry})` : ""}`,
  );
  const progress = new PullProgress(tagged, "pushing");
  let digest: string | undefined;
  try {
    const stream = (await engine.docker
      .getImage(repo)
      .push({ tag, ...(auth ? { authconfig: auth } : {}) })) as NodeJS.ReadableStream;
    await new Promise<void>((resolve, reject) => {
      engine.docker.modem.followProgress(
        stream,
        (error: Error | null, output: PushEvent[]) => {
          const failed = error?.message ?? output.find((o) => o.error)?.error;
          if (failed) reject(new Error(failed));
          else resolve();
        },
        (event: PushEvent) => {
          if (event.aux?.Digest) digest = event.aux.Digest;
          const line = progress.line(event);
          if (line) onLine(line);
        },
      );
    });
  } catch (error) {
    throw new DrydockError(
      "image_push_failed",
      `push ${tagged}: ${(error as Error).message}${/unauthorized|authentication required|denied|credentials/i.test((error as Error).message) ? ` (log in to ${registry} first: docker login ${registry})` : ""}`,
    );
  }
  if (!digest || !/^sha256:[a-f0-9]{64}$/.test(digest)) {
    throw new DrydockError("image_push_failed", `push ${tagged}: the registry gave no digest`);
  }
  const byDigest = `${repo}@${digest}`;
  log.info(`pushed ${tagged}: ${byDigest}`);
  return { tagged, byDigest, digest };
}
