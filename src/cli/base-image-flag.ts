/**
 * `--allow-base-image <ref>` (repeatable, on serve, run, eval and env): an image environments may
 * build on besides the sandbox image and each repository's own environment images, or with
 * `host/path/*` every image under a registry or path. An allowed image the engine lacks is pulled
 * (see `--pull`). A relaxation: every entry is logged here, and every build that uses one is
 * logged where it is used.
 */
import { parseImageReference } from "../engine/image-reference.js";
import { FlagError } from "../util/errors.js";
import { logger } from "../util/log.js";

const log = logger("environment");

export const ALLOW_BASE_IMAGE_HELP =
  "relaxation: an image repositories' environments may build on (devcontainer image, Dockerfile FROM / COPY --from), besides the sandbox image and the repository's own environment images; REGISTRY/* or REGISTRY/PATH/* allows every image there; an allowed image the engine lacks is pulled (see --pull) (repeatable)";

export function collectBaseImage(value: string, previous: string[] = []): string[] {
  return [...previous, value];
}

/** Checks each entry's form (an image's presence is checked when an environment names it) and logs it. */
export function checkAllowBaseImages(values: string[] | undefined): string[] {
  const refs = values ?? [];
  for (const ref of refs) {
    const pattern = ref.endsWith("/*");
    const ok = pattern
      ? ref.length > 2 && parseImageReference(`${ref.slice(0, -2)}/x`)
      : parseImageReference(ref);
    if (!ok) {
      throw new FlagError(
        "--allow-base-image",
        `${JSON.stringify(ref)} is not an image reference; give one as \`docker images\` shows it, such as python:3.12-slim, or every image under a registry or path, such as registry.example.com/team/*`,
      );
    }
    log.info(
      `relaxation: environments may build on ${pattern ? `every image under ${ref.slice(0, -2)}` : ref} (--allow-base-image)`,
    );
  }
  return refs;
}
