/**
 * Which images an environment may build on. An image in the engine may hold another repository's
 * files (its `drydock-env-base` image is that repository's whole build context), so a
 * repository's devcontainer `image`, and every image its Dockerfile reads (FROM, `COPY --from=`,
 * `RUN --mount=from=`), must be one of: the sandbox image, an environment image this same
 * repository made (by the identity label every environment image carries), or one the operator
 * allowed with `--allow-base-image` (an image, or every image under a registry or path with
 * `host/*`). Only the last may be pulled (see ImagePulls), and each use of it, a relaxation, is
 * logged.
 */
import type { Engine } from "../engine/engine.js";
import { repoDigestOf } from "../engine/engine.js";
import { allowEntryCovers, parseImageReference, type ImageReference } from "../engine/image-reference.js";
import { logger } from "../util/log.js";
import { EnvironmentDefinitionError, formatSource, type SourceRef } from "./environment-definition.js";
import { BASE_LABEL, ENV_LABEL } from "./environment-prune.js";
import { ImagePulls } from "./image-pulls.js";

const log = logger("environment");

/** The label naming the repository (its identity, see RepoFiles.repoId) an image was built for. */
export const REPO_ID_LABEL = "drydock.env.repo-id";

export interface BaseImagePolicyOptions {
  /** The sandbox image (by reference; compared by id). */
  sandboxImage: string;
  /** Images the operator allows besides (`--allow-base-image`): references, or `host/path/*`. */
  allowed?: string[];
  /** When allowed images are pulled (default: `--pull missing`). */
  pulls?: ImagePulls;
}

/** Who asks, for the check and its log line. */
export interface BaseImageUse {
  /** The repository's identity (RepoFiles.repoId). */
  repoId: string;
  /** Its top directory, for the log. */
  repoRoot: string;
  /** Where the reference is written. */
  at: SourceRef;
  /** How it is used, for messages: "image", "FROM", "COPY --from" (an image used by "image" or "FROM" must have no ONBUILD triggers). */
  via: string;
  /** Progress lines of a pull. */
  onLine?: (line: string) => void;
}

/** An image an environment may build on. */
export interface AllowedBase {
  ref: string;
  id: string;
  /** The registry digest it came by (`name@sha256:…`), when it came from a registry. */
  digest?: string;
  /**
   * True for an image the operator allowed (not the sandbox image nor the repository's own):
   * it must be checked for what a box needs.
   */
  operatorAllowed: boolean;
}

export class BaseImagePolicy {
  private readonly pulls: ImagePulls;

  constructor(
    private readonly engine: Engine,
    private readonly options: BaseImagePolicyOptions,
  ) {
    this.pulls = options.pulls ?? new ImagePulls(engine);
  }

  /** The image when the repository may build on it (pulled first when allowed); else a clear error. */
  async resolve(ref: string, use: BaseImageUse): Promise<AllowedBase> {
    const covering = (this.options.allowed ?? []).find((entry) => allowEntryCovers(entry, ref));
    let info = await this.engine.imageInfo(ref);
    if (covering !== undefined && (!info || this.pulls.mode === "always")) {
      info = await this.pulls.ensure(ref, {
        namedBy: `${use.at.file}:${use.at.line}: ${use.via}`,
        onLine: use.onLine,
      });
    }
    if (!info) {
      throw new EnvironmentDefinitionError(
        use.at,
        `${use.via} ${ref} is not present in the engine, and drydock pulls only images the operator allowed with --allow-base-image`,
        `build on the sandbox image (FROM \${DRYDOCK_SANDBOX} in a Dockerfile), or ask whoever runs drydock to add --allow-base-image ${ref} (drydock then pulls it; see --pull)`,
      );
    }
    // A base's ONBUILD triggers run in the build FROM it, unchecked: COPY --from=<any image> among them.
    if ((use.via === "FROM" || use.via === "image") && info.onBuild.length > 0) {
      throw new EnvironmentDefinitionError(
        use.at,
        `${use.via} ${ref} has ONBUILD triggers (${info.onBuild.map((t) => JSON.stringify(t)).join(", ")}), which would run unchecked in this build`,
        `build on an image without ONBUILD triggers (the sandbox image: FROM \${DRYDOCK_SANDBOX}), or write the trigger's instruction in the Dockerfile itself`,
      );
    }
    const sandboxId = await this.engine.imageId(this.options.sandboxImage);
    if (info.id === sandboxId) return { ref, id: info.id, operatorAllowed: false };
    const drydockMade = ENV_LABEL in info.labels || BASE_LABEL in info.labels;
    if (drydockMade && info.labels[REPO_ID_LABEL] === use.repoId) {
      return { ref, id: info.id, operatorAllowed: false };
    }
    const parsed = parseImageReference(ref);
    const digest = parsed ? repoDigestOf(info.repoDigests, parsed.registry, parsed.path) : undefined;
    const allowed = (entry: string) => {
      log.info(
        `--allow-base-image ${entry}: ${formatSource(use.at)} of ${use.repoRoot} builds on ${ref} (${info.id.replace(/^sha256:/, "").slice(0, 12)}${digest ? `, ${digest}` : ""}) through ${use.via}`,
      );
      return { ref, id: info.id, ...(digest ? { digest } : {}), operatorAllowed: true };
    };
    for (const entry of this.options.allowed ?? []) {
      if (entry.endsWith("/*")) continue;
      if ((await this.engine.imageId(entry)) === info.id) return allowed(entry);
    }
    // By name: what a registry pattern covers, but never another repository's environment image
    // under a name the pattern happens to match, nor an image the engine found by an id (or id
    // prefix) that reads as a name under the pattern (`FROM 178d5f725202`, `sha256:…`).
    if (covering !== undefined && !drydockMade) {
      if (carriesName(info, ref)) return allowed(covering);
      throw new EnvironmentDefinitionError(
        use.at,
        `${use.via} ${ref} is not an image tagged ${ref}: the engine found it by its id, and --allow-base-image ${covering} allows images by name`,
        `name the image by its tag or digest (${ref} is not one)`,
      );
    }
    throw new EnvironmentDefinitionError(
      use.at,
      `${use.via} ${ref} is not an image this repository may build on: only the sandbox image, this repository's own environment images and images allowed with --allow-base-image are`,
      `build on the sandbox image (FROM \${DRYDOCK_SANDBOX}), or ask whoever runs drydock to add --allow-base-image ${ref}`,
    );
  }
}

/** Whether the image carries `ref` as one of its tags (or, for a reference with a digest, digests). */
function carriesName(info: { repoTags: string[]; repoDigests: string[] }, ref: string): boolean {
  const wanted = parseImageReference(ref);
  if (!wanted) return false;
  const repo = (r: ImageReference) => `${r.registry}/${r.path}`;
  const names = (list: string[]) =>
    list.flatMap((n) => {
      const parsed = parseImageReference(n);
      return parsed && repo(parsed) === repo(wanted) ? [parsed] : [];
    });
  if (wanted.digest !== undefined) return names(info.repoDigests).some((d) => d.digest === wanted.digest);
  const tag = wanted.tag ?? "latest";
  return names(info.repoTags).some((t) => t.tag === tag);
}
