/**
 * `--allow-base-image <ref>` (repeatable, on serve, run, eval and env): an image environments may
 * build on besides the sandbox image and each repository's own environment images. A relaxation:
 * every image it names is logged here, and every build that uses one is logged where it is used.
 */
import { FlagError } from "../util/errors.js";
import { logger } from "../util/log.js";

const log = logger("environment");

export const ALLOW_BASE_IMAGE_HELP =
  "relaxation: an image in the engine that repositories' environments may build on (devcontainer image, Dockerfile FROM / COPY --from), besides the sandbox image and the repository's own environment images (repeatable)";

/** A plain image reference: name, optional tag and digest (what `docker images` shows). */
const IMAGE_REF = /^[a-z0-9][a-z0-9._\-/:@]*$/i;

export function collectBaseImage(value: string, previous: string[] = []): string[] {
  return [...previous, value];
}

/** Checks each reference's form (its presence is checked when an environment names it) and logs it. */
export function checkAllowBaseImages(values: string[] | undefined): string[] {
  const refs = values ?? [];
  for (const ref of refs) {
    if (!IMAGE_REF.test(ref)) {
      throw new FlagError(
        "--allow-base-image",
        `${JSON.stringify(ref)} is not an image reference; give one as \`docker images\` shows it, such as python:3.12-slim`,
      );
    }
    log.info(`relaxation: environments may build on ${ref} (--allow-base-image)`);
  }
  return refs;
}
