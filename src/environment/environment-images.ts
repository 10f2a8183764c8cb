/**
 * The one place that knows how a repository's environment becomes an image. Sessions, `run` and
 * eval ask `imageFor(repo, ref)` and get an image tag; an unchanged environment is never rebuilt
 * (the tag is its cache key), and two callers asking for the same one share one build. The
 * network is used during the build only; the boxes made from the image have none.
 */
import { existsSync, readFileSync } from "node:fs";
import { stat } from "node:fs/promises";
import { join, resolve } from "node:path";
import { Readable } from "node:stream";
import stripAnsi from "strip-ansi";
import tar from "tar-stream";
import type { Engine } from "../engine/engine.js";
import { defaultCaBundle } from "../sandbox/sandbox-image.js";
import { DrydockError, imageFix, InvalidArgumentError } from "../util/errors.js";
import { logger } from "../util/log.js";
import { projectRoot } from "../util/project-root.js";
import {
  DEVCONTAINER_FILES,
  DRYDOCK_ENVIRONMENT_FILE,
  EnvironmentDefinitionError,
  type SetupStep,
} from "./environment-definition.js";
import {
  KEY_LABEL,
  STEP_MARKER,
  environmentDockerfile,
  planEnvironment,
  type EnvironmentPlan,
} from "./environment-plan.js";
import { formatSource } from "./environment-definition.js";
import { loadEnvironment, type DefinitionOverride, type LoadedEnvironment } from "./load-environment.js";
import { repoFiles, type RepoFiles } from "./repo-files.js";
import { BaseImagePolicy, REPO_ID_LABEL, type AllowedBase } from "./base-image-policy.js";
import { dockerfileImages } from "./dockerfile-images.js";
import { writeDockerfile } from "./dockerfile-writer.js";
import { ImagePulls, type PullMode } from "./image-pulls.js";
import { ImageLacksError, checkServesAsBox } from "./serves-as-box.js";

const log = logger("environment");

export interface EnvironmentImagesOptions {
  /** The sandbox image environments build on (and the image of a repository with none). */
  baseImage: string;
  /** CA bundle trusted during builds; default: the host's. */
  caCert?: string;
  /**
   * Images environments may build on besides the sandbox image and the repository's own
   * environment images (`--allow-base-image`); see BaseImagePolicy.
   */
  allowBaseImages?: string[];
  /**
   * When an image `allowBaseImages` covers is pulled (`--pull`): `missing` (default), `always`,
   * `never`. Other images are never pulled.
   */
  pull?: PullMode;
}

/** The label of an environment image that holds the registry digests of the images it was built on. */
export const BASE_DIGESTS_LABEL = "drydock.env.base-digests";

export interface EnvironmentRequest {
  repo: string;
  /** A commit-ish: the environment as defined at that commit (eval tasks); default: the working tree. */
  ref?: string;
  /** Build output, a line at a time. */
  onLine?: (line: string) => void;
  /** Rebuild even when the image exists. */
  force?: boolean;
  /** A definition to use instead of the repository's own. */
  override?: DefinitionOverride;
  /** What a failed build's message tells the reader to do once it is fixed (default: run `drydock env build` again). */
  retry?: string;
}

const RETRY = "run `drydock env build` again";

/** What a repository's environment is and whether its image exists, without building it. */
export interface EnvironmentStatus extends LoadedEnvironment {
  repoRoot: string;
  /** The repository's identity (RepoFiles.repoId), the label its environment images carry. */
  repoId: string;
  source: string;
  /** Undefined for the default (no definition): boxes use the base image itself. */
  plan?: EnvironmentPlan;
  /** The image boxes use: the plan's tag, or the base image. */
  image: string;
  present: boolean;
  /** True when this call built the image. */
  built?: boolean;
  /** The images the environment builds on besides the sandbox image (a devcontainer image, FROMs). */
  baseImages?: AllowedBase[];
  /** The id of the image the environment's own build starts from (the sandbox's or a devcontainer `image`'s). */
  baseImageId?: string;
  /**
   * For a Dockerfile base: the Dockerfile the builder gets, which drydock wrote from the one it
   * checked (see dockerfile-writer.ts), every image pinned to the id checked for it.
   */
  builderDockerfile?: string;
  /** For each line of builderDockerfile, the line of the repository's Dockerfile it was written from. */
  builderDockerfileLines?: number[];
}

/** A build that failed: which step, from which file and line, and its last output. */
export class EnvironmentBuildError extends DrydockError {
  override name = "EnvironmentBuildError";
  constructor(message: string) {
    super("environment_build_failed", message);
  }
}

export class EnvironmentImages {
  private readonly building = new Map<string, Promise<void>>();
  private readonly memo = new Map<string, { signature: string | undefined; status: EnvironmentStatus }>();
  private readonly caCert: string | undefined;
  private readonly policy: BaseImagePolicy;
  private readonly pulls: ImagePulls;

  constructor(
    private readonly engine: Engine,
    private readonly options: EnvironmentImagesOptions,
  ) {
    if (options.caCert !== undefined && !existsSync(options.caCert)) {
      throw new InvalidArgumentError(
        "--ca-cert",
        `${options.caCert} does not exist; give the path of a PEM CA bundle`,
      );
    }
    this.caCert = options.caCert ?? defaultCaBundle();
    this.pulls = new ImagePulls(engine, options.pull);
    this.policy = new BaseImagePolicy(engine, {
      sandboxImage: options.baseImage,
      allowed: options.allowBaseImages,
      pulls: this.pulls,
    });
  }

  get baseImage(): string {
    return this.options.baseImage;
  }

  /**
   * Reads the definition and computes its tag; builds nothing, but pulls an allowed image it
   * names that the engine lacks (its id is part of the tag), with progress lines to onLine.
   */
  async status(
    repo: string,
    ref?: string,
    override?: DefinitionOverride,
    onLine?: (line: string) => void,
  ): Promise<EnvironmentStatus> {
    // A session start asks this every time: an unchanged repository is answered from memory after
    // a few stat calls, not git processes (see `signature`).
    const key = JSON.stringify([resolve(repo), ref ?? null, override?.text ?? null]);
    const hit = this.memo.get(key);
    if (hit && (await signature(hit.status, ref)) === hit.signature) {
      return { ...hit.status, present: await this.isBuilt(hit.status) };
    }
    const status = await this.readStatus(repo, ref, override, onLine);
    const sig = await signature(status, ref);
    if (sig !== undefined) this.memo.set(key, { signature: sig, status });
    return status;
  }

  private async readStatus(
    repo: string,
    ref?: string,
    override?: DefinitionOverride,
    onLine?: (line: string) => void,
  ): Promise<EnvironmentStatus> {
    const files = await repoFiles(repo, ref);
    const loaded = await loadEnvironment(files, override);
    const base = { repoRoot: files.root, repoId: files.repoId, source: files.describe, ...loaded };
    if (loaded.definition.kind === "default") {
      return {
        ...base,
        image: this.options.baseImage,
        present: await this.engine.hasImage(this.options.baseImage),
      };
    }
    const baseImages: AllowedBase[] = [];
    const baseId = await this.baseImageId(loaded, files, baseImages, onLine);
    const checked = await this.checkDockerfile(loaded, files, baseImages, onLine);
    const plan = planEnvironment({
      ...loaded,
      baseImageId: baseId,
      dockerfileImageIds: checked?.ids,
      source: files.source,
    });
    const status = {
      ...base,
      plan,
      image: plan.tag,
      present: false,
      baseImages,
      baseImageId: baseId,
      ...(checked ? { builderDockerfile: checked.written, builderDockerfileLines: checked.lines } : {}),
    };
    return { ...status, present: await this.isBuilt(status) };
  }

  /**
   * Whether the plan's tag names an image built from this very key (its whole key in KEY_LABEL):
   * a tag whose 48 bits another key matched is rebuilt, and the tag moves, never shared.
   */
  private async isBuilt(status: EnvironmentStatus): Promise<boolean> {
    if (!status.plan) return this.engine.hasImage(status.image);
    const info = await this.engine.imageInfo(status.plan.tag);
    return info?.labels[KEY_LABEL] === status.plan.key;
  }

  /** The image for a repository's environment, built first when missing. */
  async imageFor(request: EnvironmentRequest): Promise<EnvironmentStatus> {
    const status = await this.status(request.repo, request.ref, request.override, request.onLine);
    if (!status.plan || (status.present && !request.force)) return status;
    const { tag, key } = status.plan;
    // By the whole key, not the tag: two environments whose tags match share no build.
    let build = this.building.get(key);
    if (!build) {
      // Registered before the first await, so a second caller finds this build and waits on it.
      const onLine = request.onLine ?? ((l: string) => log.info(l));
      build = repoFiles(request.repo, request.ref).then((files) =>
        this.build(status, files, onLine, request.retry ?? RETRY),
      );
      this.building.set(key, build);
      void build.finally(() => this.building.delete(key)).catch(() => undefined);
    } else {
      request.onLine?.(`waiting for the build of ${tag} already under way`);
    }
    await build;
    return { ...status, present: true, built: true };
  }

  private async baseImageId(
    loaded: LoadedEnvironment,
    files: RepoFiles,
    bases: AllowedBase[],
    onLine?: (line: string) => void,
  ): Promise<string> {
    const base = loaded.definition.base;
    const sandboxId = await this.engine.imageId(this.options.baseImage);
    if (!sandboxId) {
      throw new DrydockError(
        "image_missing",
        `the sandbox image ${this.options.baseImage} is not present; ${imageFix(this.options.baseImage)}`,
      );
    }
    if (base.kind !== "image") return sandboxId;
    const allowed = await this.policy.resolve(base.ref, {
      repoId: files.repoId,
      repoRoot: files.root,
      at: base.from,
      via: "image",
      onLine,
    });
    bases.push(allowed);
    return allowed.id;
  }

  /**
   * A Dockerfile base, checked: the ids of every image it reads, each one allowed by the policy,
   * and the Dockerfile the builder will get, written from what was checked with each image pinned
   * to its id. What cannot be read exactly, or resolved to one image, is refused, never skipped.
   */
  private async checkDockerfile(
    loaded: LoadedEnvironment,
    files: RepoFiles,
    bases: AllowedBase[],
    onLine?: (line: string) => void,
  ): Promise<{ ids: Record<string, string>; written: string; lines: number[] } | undefined> {
    const base = loaded.definition.base;
    if (base.kind !== "dockerfile") return undefined;
    const found = dockerfileImages(loaded.dockerfileText ?? "", {
      DRYDOCK_SANDBOX: this.options.baseImage,
      ...base.args,
    });
    const problem = found.problems[0];
    if (problem) {
      throw new EnvironmentDefinitionError(
        { file: base.dockerfile, line: problem.line },
        problem.problem,
        problem.fix ??
          "name the image plainly, or with an ARG that has a value (FROM ${DRYDOCK_SANDBOX} is the sandbox image)",
      );
    }
    const ids: Record<string, string> = {};
    for (const image of found.images) {
      const allowed = await this.policy.resolve(image.ref, {
        repoId: files.repoId,
        repoRoot: files.root,
        at: { file: base.dockerfile, line: image.line },
        via: image.via,
        onLine,
      });
      ids[image.ref] = allowed.id;
      if (!bases.some((b) => b.ref === allowed.ref)) bases.push(allowed);
    }
    return {
      ids,
      written: writeDockerfile(found.instructions, ids),
      lines: found.instructions.map((i) => i.line),
    };
  }

  private async build(
    status: EnvironmentStatus,
    files: RepoFiles,
    onLine: (line: string) => void,
    retry: string,
  ): Promise<void> {
    const { definition } = status;
    const plan = status.plan!;
    // The files are read again for the build: a repository replaced at the same path since the
    // plan (deleted and cloned again) is another repository, and builds under another key.
    if (files.repoId !== status.repoId) {
      throw new DrydockError(
        "repository_changed",
        `${files.root} is another repository than when its environment was planned (it was cloned again); run the command again`,
      );
    }
    const started = Date.now();
    onLine(`building environment ${plan.tag} from ${definition.file} (${files.describe} of ${files.root})`);
    for (const warning of definition.warnings) onLine(`note: ${definition.file}: ${warning}`);
    // The environment's build starts from the image id that was checked, never a name a retag could move.
    let base = status.baseImageId ?? this.options.baseImage;
    if (definition.base.kind === "dockerfile") {
      const baseTag = `drydock-env-base:${plan.hash}`;
      const builderDockerfile = status.builderDockerfile;
      if (builderDockerfile === undefined) {
        throw new DrydockError(
          "dockerfile_unchecked",
          `${definition.base.dockerfile} was not checked; nothing was built`,
        );
      }
      const { dockerfile, context, args, target } = definition.base;
      const pack = tar.pack();
      const packing = (async () => {
        await files.pack(context, "", pack);
        // The Dockerfile drydock wrote from the one it checked, never the repository's own text,
        // under a name of drydock's, after the context: a file of that name there is replaced.
        pack.entry({ name: ".drydock.Dockerfile" }, builderDockerfile);
        pack.finalize();
      })();
      packing.catch((error: unknown) => pack.destroy(error as Error));
      onLine(`building ${dockerfile} (context ${context || "."}) as ${baseTag}`);
      await this.runBuild(
        Readable.from(pack),
        {
          tag: baseTag,
          buildArgs: { DRYDOCK_SANDBOX: this.options.baseImage, ...args },
          dockerfile: ".drydock.Dockerfile",
          target,
          labels: {
            "drydock.env.base-of": plan.tag,
            "drydock.env.repo": files.root,
            [REPO_ID_LABEL]: files.repoId,
          },
        },
        {
          // The builder numbers every instruction of the file it runs (global ARGs too) from 1.
          instructions: [
            undefined,
            ...builderDockerfile
              .split("\n")
              .slice(0, -1)
              .map((command, i) => ({
                command,
                from: { file: dockerfile, line: status.builderDockerfileLines?.[i] ?? 0 },
                label: "the instruction",
              })),
          ],
          setup: [],
        },
        { file: definition.base.from.file, what: `building ${dockerfile}`, retry },
        onLine,
      );
      await packing;
      base = (await this.engine.imageId(baseTag)) ?? baseTag;
    }
    const operatorBases = (status.baseImages ?? []).filter((b) => b.operatorAllowed);
    if (operatorBases.length > 0) {
      const made =
        definition.base.kind === "dockerfile"
          ? `${definition.base.dockerfile} (on ${operatorBases.map((b) => b.ref).join(", ")})`
          : definition.base.kind === "image"
            ? definition.base.ref
            : base;
      await this.checkServesAsBox(base, made, definition.file ?? "", onLine);
    }
    const digests = Object.fromEntries(
      (status.baseImages ?? []).flatMap((b) => (b.digest ? [[b.ref, b.digest]] : [])),
    );
    const labels = {
      "drydock.env.hash": plan.hash,
      [KEY_LABEL]: plan.key,
      "drydock.env.source": status.inline ? "inline definition" : (definition.file ?? "default"),
      "drydock.env.repo": files.root,
      [REPO_ID_LABEL]: files.repoId,
      ...(Object.keys(digests).length > 0 ? { [BASE_DIGESTS_LABEL]: JSON.stringify(digests) } : {}),
    };
    const buildFile = environmentDockerfile(definition, base, labels);
    const pack = tar.pack();
    const packing = (async () => {
      pack.entry({ name: "Dockerfile" }, buildFile.dockerfile);
      pack.entry({ name: "ca-bundle.crt" }, this.caCert ? readFileSync(this.caCert) : "");
      pack.entry(
        { name: "env-build/prepare.sh", mode: 0o755 },
        readFileSync(join(projectRoot(), "images", "environment", "prepare.sh")),
      );
      for (const [name, text] of Object.entries(buildFile.files)) pack.entry({ name, mode: 0o755 }, text);
      await files.pack("", "repo/", pack);
      pack.finalize();
    })();
    packing.catch((error: unknown) => pack.destroy(error as Error));
    await this.runBuild(
      Readable.from(pack),
      { tag: plan.tag, buildArgs: {}, labels },
      { instructions: buildFile.instructionSteps, setup: buildFile.setupSteps },
      { file: definition.file ?? "", what: "the environment build", retry },
      onLine,
    );
    await packing;
    onLine(`built ${plan.tag} in ${Math.round((Date.now() - started) / 1000)} s`);
    log.info(`environment ${plan.tag} built for ${files.root} in ${Date.now() - started} ms`);
  }

  /** An environment on an image the operator allowed must still serve as a box (see serves-as-box.ts). */
  private async checkServesAsBox(
    image: string,
    made: string,
    file: string,
    onLine: (line: string) => void,
  ): Promise<void> {
    try {
      await checkServesAsBox(this.engine, image, made, onLine);
    } catch (error) {
      if (!(error instanceof ImageLacksError)) throw error;
      throw new EnvironmentBuildError(`${file}: ${error.message}. No environment image was tagged`);
    }
  }

  /** Runs one build; a failure names the step, its file and line, and the step's last output. */
  private async runBuild(
    context: Readable,
    options: Parameters<Engine["buildImage"]>[1],
    steps: { instructions: Array<SetupStep | undefined>; setup: SetupStep[] },
    where: { file: string; what: string; retry: string },
    onLine: (line: string) => void,
  ): Promise<void> {
    let step = 0;
    /** The setup step the runner last announced (1-based), and the exit code it reported. */
    let setupStep = 0;
    let setupExit: string | undefined;
    let recent: string[] = [];
    try {
      await this.engine.buildImage(context, options, (raw) => {
        const line = stripAnsi(raw);
        if (!line.trim()) return;
        const at = /^Step (\d+)\/\d+ : /.exec(line);
        const marker = STEP_MARKER.exec(line);
        if (at) {
          step = Number(at[1]);
          setupStep = 0;
          recent = [];
        } else if (marker && !marker[2]) {
          setupStep = Number(marker[1]);
          recent = [];
        } else if (marker) {
          setupExit = marker[2];
        } else {
          recent.push(line);
          if (recent.length > 30) recent.shift();
        }
        onLine(line);
      });
    } catch (error) {
      const reason = error instanceof Error ? error.message : String(error);
      const failed = setupStep > 0 ? steps.setup[setupStep - 1] : steps.instructions[step];
      const exit = setupExit ?? /returned a non-zero code: (\d+)/.exec(reason)?.[1];
      const tail = recent
        .filter((l) => !/^ ---> |^Removing intermediate container/.test(l))
        .slice(-15)
        .map((l) => `  | ${l}`)
        .join("\n");
      if (failed) {
        const at = formatSource({ ...failed.from, file: failed.from.file || where.file });
        throw new EnvironmentBuildError(
          `${at}: ${failed.label} failed${exit ? ` with exit code ${exit}` : ""}: ${failed.command}\n${tail}\nfix the command (or what it needs) and ${where.retry}; no image was tagged`,
        );
      }
      throw new EnvironmentBuildError(
        `${where.file}: ${where.what} failed at step ${step}: ${reason}\n${tail}\nno image was tagged; fix it and ${where.retry}`,
      );
    }
  }
}

/**
 * What must stay the same for a remembered status to hold: for a commit, nothing (a commit does
 * not change); for the working tree, the stat data of the definition files, the Dockerfile, the
 * key files and git's index (a file git starts or stops tracking changes the index). Undefined
 * (never remembered) for a branch or tag name, which can move.
 */
async function signature(status: EnvironmentStatus, ref: string | undefined): Promise<string | undefined> {
  if (ref !== undefined) return /^[0-9a-f]{40}([0-9a-f]{24})?$/.test(ref) ? "commit" : undefined;
  const paths = [
    ".git",
    ".git/index",
    DRYDOCK_ENVIRONMENT_FILE,
    ...DEVCONTAINER_FILES,
    ...(status.definition.base.kind === "dockerfile" ? [status.definition.base.dockerfile] : []),
    ...status.keyFiles.map((f) => f.path),
  ];
  const parts = await Promise.all(
    paths.map(async (path) => {
      const info = await stat(join(status.repoRoot, path)).catch(() => undefined);
      // Device, inode and birth time too: they make the repository's identity (see repoFiles).
      return info
        ? `${path}:${info.dev}:${info.ino}:${info.birthtimeMs}:${info.size}:${info.mtimeMs}`
        : `${path}:-`;
    }),
  );
  return parts.join("\n");
}
