/**
 * When drydock pulls an image, and when it refuses: `--pull missing` (the default) pulls an image
 * the engine lacks, `always` pulls it again at its first use in this process (a moved tag is
 * seen), `never` pulls nothing. Only images the operator chose are ever pulled: an eval task's
 * `image` (the task file is the operator's), and an image an environment names when
 * `--allow-base-image` covers it; the caller says which. Two callers of one image share one pull.
 */
import type { Engine } from "../engine/engine.js";
import { DOCKER_HUB, parseImageReference } from "../engine/image-reference.js";
import { DrydockError, ImageMissingError } from "../util/errors.js";
import { logger } from "../util/log.js";

const log = logger("environment");

export const PULL_MODES = ["missing", "always", "never"] as const;
export type PullMode = (typeof PULL_MODES)[number];
export const DEFAULT_PULL_MODE: PullMode = "missing";

/** An image that is not there and may not be pulled, or a pull that failed. */
export class ImagePullError extends DrydockError {
  override name = "ImagePullError";
  constructor(message: string) {
    super("image_pull_refused", message);
  }
}

/** An image present in the engine: its id, and the registry digest it came by when it has one. */
export interface PresentImage {
  id: string;
  labels: Record<string, string>;
  repoDigests: string[];
  repoTags: string[];
  /** Its ONBUILD triggers. */
  onBuild: string[];
  /** True when this call (or one it waited on) pulled it. */
  pulled: boolean;
}

export interface EnsureOptions {
  /** The pull mode for this image (a task's own `pull` wins over the flag's). */
  mode?: PullMode;
  /** Where `mode` was set, for the refusal: default the flag ("--pull never"). */
  modeSource?: string;
  /** Progress lines of a pull. */
  onLine?: (line: string) => void;
  /** Who names the image, for messages: "tasks.jsonl:3 image", ".devcontainer/devcontainer.json:2 image". */
  namedBy: string;
}

export class ImagePulls {
  private readonly pulls = new Map<string, Promise<void>>();
  /** Images `always` has pulled in this process: pulled again only in another. */
  private readonly fresh = new Set<string>();

  constructor(
    private readonly engine: Engine,
    readonly mode: PullMode = DEFAULT_PULL_MODE,
  ) {}

  /** Makes the image present as the mode says, or says why it is not. */
  async ensure(ref: string, options: EnsureOptions): Promise<PresentImage> {
    const mode = options.mode ?? this.mode;
    let info = await this.engine.imageInfo(ref);
    const wanted = mode === "always" ? !this.fresh.has(ref) : !info;
    if (!wanted) {
      if (!info) throw new ImagePullError(`${options.namedBy} ${ref} is not present in the engine`);
      return { ...info, pulled: false };
    }
    if (mode === "never") {
      throw new ImagePullError(
        `${options.namedBy} ${ref} is not present in the engine, and drydock pulls no image with ${options.modeSource ?? "--pull never"}; pull it yourself (docker pull ${ref}), or ${options.modeSource ? `set ${options.modeSource.replace("never", '"missing"')}` : "run with --pull missing"} to let drydock pull it`,
      );
    }
    let pulling = this.pulls.get(ref);
    if (!pulling) {
      pulling = this.pull(ref, mode, options.onLine ?? (() => undefined));
      this.pulls.set(ref, pulling);
      void pulling.finally(() => this.pulls.delete(ref)).catch(() => undefined);
    } else {
      options.onLine?.(`waiting for the pull of ${ref} already under way`);
    }
    await pulling;
    info = await this.engine.imageInfo(ref);
    if (!info) throw new ImagePullError(`${ref} was pulled, but the engine does not show it`);
    return { ...info, pulled: true };
  }

  private async pull(ref: string, mode: PullMode, onLine: (line: string) => void): Promise<void> {
    const started = Date.now();
    onLine(`pulling ${ref} (--pull ${mode})`);
    try {
      const { id, digest } = await this.engine.pullImage(ref, onLine);
      this.fresh.add(ref);
      onLine(
        `pulled ${ref} in ${((Date.now() - started) / 1000).toFixed(1)} s: ${id.replace(/^sha256:/, "").slice(0, 12)}${digest ? ` (${digest})` : ""}`,
      );
    } catch (error) {
      const reason = error instanceof Error ? error.message : String(error);
      log.warn(`pull ${ref} failed: ${reason}`);
      throw new ImagePullError(
        `${reason}; check the name and that the registry answers, and for a private registry that \`docker login\` (or DOCKER_CONFIG) holds its credentials for the engine's client, or load the image yourself and run with --pull never`,
      );
    }
  }
}

/**
 * The operator's own `--image` (the sandbox image boxes and environments use): when the engine
 * lacks it and it names a registry host (`registry.example.com/team/box:1`), it is pulled as
 * `mode` says; a local name (`drydock-sandbox:…`) is built, never pulled.
 */
export async function sandboxImagePresent(
  engine: Engine,
  image: string,
  mode: PullMode | undefined,
  onLine?: (line: string) => void,
): Promise<void> {
  if (mode !== "always" && (await engine.hasImage(image))) return;
  const parsed = parseImageReference(image);
  if (!parsed || parsed.registry === DOCKER_HUB) {
    if (await engine.hasImage(image)) return;
    throw new ImageMissingError(image);
  }
  await new ImagePulls(engine, mode).ensure(image, { namedBy: "--image", onLine });
}
