/**
 * Which images an environment may build on. An image in the engine may hold another repository's
 * files (its `drydock-env-base` image is that repository's whole build context), so a
 * repository's devcontainer `image`, and every image its Dockerfile reads (FROM, `COPY --from=`,
 * `RUN --mount=from=`), must be one of: the sandbox image, an environment image this same
 * repository made (by the identity label every environment image carries), or one the operator
 * allowed with `--allow-base-image`. Each use of the last, a relaxation, is logged.
 */
import type { Engine } from "../engine/engine.js";
import { logger } from "../util/log.js";
import { EnvironmentDefinitionError, formatSource, type SourceRef } from "./environment-definition.js";
import { BASE_LABEL, ENV_LABEL } from "./environment-prune.js";

const log = logger("environment");

/** The label naming the repository (its identity, see RepoFiles.repoId) an image was built for. */
export const REPO_ID_LABEL = "drydock.env.repo-id";

export interface BaseImagePolicyOptions {
  /** The sandbox image (by reference; compared by id). */
  sandboxImage: string;
  /** Images the operator allows besides (`--allow-base-image`), by reference. */
  allowed?: string[];
}

/** Who asks, for the check and its log line. */
export interface BaseImageUse {
  /** The repository's identity (RepoFiles.repoId). */
  repoId: string;
  /** Its top directory, for the log. */
  repoRoot: string;
  /** Where the reference is written. */
  at: SourceRef;
  /** How it is used, for messages: "image", "FROM", "COPY --from". */
  via: string;
}

export class BaseImagePolicy {
  constructor(
    private readonly engine: Engine,
    private readonly options: BaseImagePolicyOptions,
  ) {}

  /** The image's id when the repository may build on it; otherwise a clear error. */
  async resolve(ref: string, use: BaseImageUse): Promise<string> {
    const info = await this.engine.imageInfo(ref);
    if (!info) {
      throw new EnvironmentDefinitionError(
        use.at,
        `${use.via} ${ref} is not present in the engine (drydock pulls no image for an environment)`,
        `build or load it first, or build on the sandbox image (FROM \${DRYDOCK_SANDBOX} in a Dockerfile)`,
      );
    }
    const sandboxId = await this.engine.imageId(this.options.sandboxImage);
    if (info.id === sandboxId) return info.id;
    const drydockMade = ENV_LABEL in info.labels || BASE_LABEL in info.labels;
    if (drydockMade && info.labels[REPO_ID_LABEL] === use.repoId) return info.id;
    for (const allowed of this.options.allowed ?? []) {
      if ((await this.engine.imageId(allowed)) !== info.id) continue;
      log.info(
        `--allow-base-image ${allowed}: ${formatSource(use.at)} of ${use.repoRoot} builds on ${ref} (${info.id.replace(/^sha256:/, "").slice(0, 12)}) through ${use.via}`,
      );
      return info.id;
    }
    throw new EnvironmentDefinitionError(
      use.at,
      `${use.via} ${ref} is not an image this repository may build on: only the sandbox image, this repository's own environment images and images allowed with --allow-base-image are`,
      `build on the sandbox image (FROM \${DRYDOCK_SANDBOX}), or ask whoever runs drydock to add --allow-base-image ${ref}`,
    );
  }
}
