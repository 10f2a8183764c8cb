/**
 * The container backend: the only place that knows dockerode. Every call logs what it does with
 * the short container id and rethrows with context.
 */
import type Docker from "dockerode";
import type { Duplex, Readable } from "node:stream";
import { BoxGoneError, DrydockError, EngineUnavailableError, ImageMissingError } from "../util/errors.js";
import { logger } from "../util/log.js";
import {
  type BoxState,
  short,
  type BoxEngine,
  type BoxSummary,
  type EngineRuntime,
  type ImageEngine,
} from "./box-engine.js";
import { toCreateOptions, type ContainerSpec } from "./container-spec.js";
import { openTerminalExec, type TerminalExec, type TerminalExecOptions } from "./exec-terminal.js";
import { runExec, type ExecOptions, type ExecResult } from "./exec.js";
import { BoxStreams } from "./box-streams.js";
import { parseEngineAddress } from "./engine-address.js";
import { parseImageReference } from "./image-reference.js";
import { PullProgress, type PullEvent } from "./pull-progress.js";
import { registryAuth } from "./registry-auth.js";
import { terminalArgv } from "./runtime-terminal.js";

export { short, type BoxState, type BoxSummary, type EngineRuntime } from "./box-engine.js";

const log = logger("engine");

export interface ImageSummary {
  id: string;
  tags: string[];
  labels: Record<string, string>;
  createdAt: Date;
  sizeBytes: number;
}

export interface EngineVersion {
  version: string;
  apiVersion: string;
  os: string;
}

/** The Docker Engine: runtimes are `docker info`'s Runtimes. */
export class Engine implements BoxEngine, ImageEngine {
  private runtimeList: Promise<EngineRuntime[]> | undefined;
  /** Each box's runtime, as made or as inspected once. */
  private readonly boxRuntimes = new Map<string, string | undefined>();
  /** Boxes that end with this process: their stdin attach, held until the box is removed. */
  private readonly holders = new Map<string, NodeJS.ReadWriteStream | undefined>();
  /** The exec streams open to each box, ended when the box goes (see box-streams.ts). */
  private readonly streams: BoxStreams;

  private constructor(
    readonly docker: Docker,
    /** How messages name the engine: its URL (DOCKER_HOST or the default socket when none was given). */
    readonly name: string = process.env.DOCKER_HOST ?? "unix:///var/run/docker.sock",
  ) {
    this.streams = new BoxStreams(
      () =>
        docker.getEvents({
          since: Math.floor(Date.now() / 1000) - 1,
          filters: { type: ["container"], event: ["die", "destroy"] },
        }) as unknown as Promise<Readable>,
    );
  }

  /**
   * Connects to the engine at `url` (see engine-address.ts; TLS files from `tlsDir`), else to
   * the one DOCKER_HOST or the default socket names, and checks it answers.
   */
  static async connect(options: { timeoutMs?: number; url?: string; tlsDir?: string } = {}): Promise<Engine> {
    const address = options.url ? parseEngineAddress(options.url, options.tlsDir) : undefined;
    // Loaded at the first connection, not with every module that names the engine: with its
    // dependencies (gRPC, protobuf, ssh2) it is a large part of a command's start, and a command
    // that refuses its flags never connects.
    const { default: DockerClient } = await import("dockerode");
    const docker = new DockerClient({ ...address?.options, timeout: options.timeoutMs });
    const engine = new Engine(docker, address?.name);
    try {
      await docker.ping();
    } catch (error) {
      throw new EngineUnavailableError(`${engine.name}: ${(error as Error).message}`, { cause: error });
    }
    return engine;
  }

  /** Whether the engine answers a ping within timeoutMs. */
  async answers(timeoutMs = 5_000): Promise<boolean> {
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), timeoutMs)));
    try {
      return await Promise.race([
        this.docker.ping().then(
          () => true,
          () => false,
        ),
        late,
      ]);
    } finally {
      clearTimeout(timer);
    }
  }

  /** Sends an image to another engine as `docker save | docker load` would: same id, same tags. */
  async sendImage(ref: string, to: Engine): Promise<void> {
    try {
      const tar = (await this.docker.getImage(ref).get()) as NodeJS.ReadableStream;
      const answer = (await to.docker.loadImage(tar, { quiet: true })) as NodeJS.ReadableStream;
      await new Promise<void>((resolve, reject) => {
        tar.on("error", reject);
        to.docker.modem.followProgress(answer, (error: Error | null, output: Array<{ error?: string }>) => {
          const failed = error?.message ?? output.find((o) => o.error)?.error;
          if (failed) reject(new Error(failed));
          else resolve();
        });
      });
      log.info(`sent image ${ref} from ${this.name} to ${to.name}`);
    } catch (error) {
      throw this.wrap(error, `send image ${ref} to ${to.name}`);
    }
  }

  async version(): Promise<EngineVersion> {
    const v = await this.docker.version();
    return { version: v.Version, apiVersion: v.ApiVersion, os: `${v.Os}/${v.Arch}` };
  }

  /** What the engine's host has: every box's limits must fit in it. */
  async capacity(): Promise<{ cpus: number; memoryMB: number }> {
    try {
      const info = (await this.docker.info()) as { NCPU: number; MemTotal: number };
      return { cpus: info.NCPU, memoryMB: Math.floor(info.MemTotal / (1024 * 1024)) };
    } catch (error) {
      throw this.wrap(error, "read the engine's host capacity");
    }
  }

  /** The OCI runtimes the engine has, read once per connection (registering one means a reload). */
  runtimes(): Promise<EngineRuntime[]> {
    this.runtimeList ??= this.readRuntimes();
    return this.runtimeList;
  }

  private async readRuntimes(): Promise<EngineRuntime[]> {
    try {
      const info = (await this.docker.info()) as {
        Runtimes?: Record<string, { path?: string; runtimeArgs?: string[] }>;
      };
      return Object.entries(info.Runtimes ?? {})
        .map(([name, r]) => ({ name, path: r.path ?? name, args: r.runtimeArgs ?? [] }))
        .sort((a, b) => a.name.localeCompare(b.name));
    } catch (error) {
      this.runtimeList = undefined;
      throw this.wrap(error, "list the engine's runtimes");
    }
  }

  async hasImage(ref: string): Promise<boolean> {
    try {
      await this.docker.getImage(ref).inspect();
      return true;
    } catch (error) {
      if ((error as { statusCode?: number }).statusCode === 404) return false;
      throw this.wrap(error, `inspect image ${ref}`);
    }
  }

  /** The engine's images that carry `label` (any value). */
  async listImages(label: string): Promise<ImageSummary[]> {
    try {
      const list = await this.docker.listImages({ filters: { label: [label] } });
      return list.map((i) => ({
        id: i.Id,
        tags: (i.RepoTags ?? []).filter((t) => t !== "<none>:<none>"),
        labels: i.Labels ?? {},
        createdAt: new Date(i.Created * 1000),
        sizeBytes: i.Size,
      }));
    } catch (error) {
      throw this.wrap(error, `list images labelled ${label}`);
    }
  }

  /** How many containers (running or not) were made from each image, by image id. */
  async boxesByImage(): Promise<Map<string, number>> {
    try {
      const counts = new Map<string, number>();
      for (const c of await this.docker.listContainers({ all: true }))
        counts.set(c.ImageID, (counts.get(c.ImageID) ?? 0) + 1);
      return counts;
    } catch (error) {
      throw this.wrap(error, "list the containers");
    }
  }

  /**
   * Removes an image reference (a tag, or an untagged image's id), never by force: an image a
   * container uses is refused (false). One already gone is not an error (true).
   */
  async removeImage(ref: string): Promise<boolean> {
    try {
      await this.docker.getImage(ref).remove();
      return true;
    } catch (error) {
      const code = (error as { statusCode?: number }).statusCode;
      if (code === 404) return true;
      if (code === 409) return false;
      throw this.wrap(error, `remove image ${ref}`);
    }
  }

  /** Whether the engine has a network of this name or id. */
  async hasNetwork(name: string): Promise<boolean> {
    try {
      await this.docker.getNetwork(name).inspect();
      return true;
    } catch (error) {
      if ((error as { statusCode?: number }).statusCode === 404) return false;
      throw this.wrap(error, `inspect network ${name}`);
    }
  }

  /**
   * The gateway address of every network on the engine: the host as containers on that network
   * see it (the egress proxy refuses them as the host's own).
   */
  async networkGateways(): Promise<string[]> {
    let networks: Docker.NetworkInspectInfo[];
    try {
      networks = await this.docker.listNetworks();
    } catch (error) {
      throw this.wrap(error, "list networks");
    }
    return networks.flatMap((n) => (n.IPAM?.Config ?? []).flatMap((c) => (c.Gateway ? [c.Gateway] : [])));
  }

  /** The image id for a reference, or undefined when the engine does not have it. */
  async imageId(ref: string): Promise<string | undefined> {
    try {
      return (await this.docker.getImage(ref).inspect()).Id;
    } catch (error) {
      if ((error as { statusCode?: number }).statusCode === 404) return undefined;
      throw this.wrap(error, `inspect image ${ref}`);
    }
  }

  /**
   * An image's id, labels and registry digests (`name@sha256:…`, one per registry repository it
   * was pulled from or pushed to), or undefined when the engine does not have it.
   */
  async imageInfo(ref: string): Promise<
    | {
        id: string;
        labels: Record<string, string>;
        repoDigests: string[];
        /** The names it is tagged with (`python:3.12`): an inspect by name also finds an image by id prefix. */
        repoTags: string[];
        /** The image's ONBUILD triggers: they run in the build of any image FROM it. */
        onBuild: string[];
      }
    | undefined
  > {
    try {
      const info = await this.docker.getImage(ref).inspect();
      return {
        id: info.Id,
        labels: info.Config?.Labels ?? {},
        repoDigests: info.RepoDigests ?? [],
        repoTags: info.RepoTags ?? [],
        onBuild: (info.Config as { OnBuild?: string[] | null } | undefined)?.OnBuild ?? [],
      };
    } catch (error) {
      if ((error as { statusCode?: number }).statusCode === 404) return undefined;
      throw this.wrap(error, `inspect image ${ref}`);
    }
  }

  async tag(source: string, target: string): Promise<void> {
    // The tag is after the last colon that follows the last slash: a registry's port is not one.
    const colon = target.lastIndexOf(":");
    const hasTag = colon > target.lastIndexOf("/");
    await this.docker.getImage(source).tag({
      repo: hasTag ? target.slice(0, colon) : target,
      tag: hasTag ? target.slice(colon + 1) : "latest",
    });
  }

  /** Pulls an image; fails after timeoutMs (no registry may be reachable). */
  async pull(ref: string, timeoutMs: number): Promise<void> {
    const pulling = new Promise<void>((resolve, reject) => {
      this.docker.pull(ref, (error: Error | null, stream: NodeJS.ReadableStream) => {
        if (error) return reject(error);
        this.docker.modem.followProgress(stream, (e: Error | null) => (e ? reject(e) : resolve()));
      });
    });
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`no answer within ${timeoutMs / 1000} s`)), timeoutMs);
    });
    try {
      await Promise.race([pulling, timeout]);
    } catch (error) {
      throw this.wrap(error, `pull ${ref}`);
    } finally {
      clearTimeout(timer);
    }
  }

  /**
   * Pulls an image from its registry with the credentials the engine's client configuration holds
   * for that registry (see registry-auth.ts: they go to the engine for this pull and nowhere
   * else); progress lines go to onLine. Returns the image's id and the digest it was pulled by
   * (`name@sha256:…`).
   */
  async pullImage(
    ref: string,
    onLine: (line: string) => void = () => undefined,
  ): Promise<{ id: string; digest?: string }> {
    const image = parseImageReference(ref);
    const auth = image ? await registryAuth(image.registry) : undefined;
    log.info(
      `pulling image ${ref}${auth ? ` (with the client configuration's credentials for ${image!.registry})` : ""}`,
    );
    const progress = new PullProgress(ref);
    try {
      const stream = (await this.docker.pull(ref, auth ? { authconfig: auth } : {})) as NodeJS.ReadableStream;
      await new Promise<void>((resolve, reject) => {
        this.docker.modem.followProgress(
          stream,
          (error: Error | null, output: PullEvent[]) => {
            const failed = error?.message ?? output.find((o) => o.error)?.error;
            if (failed) reject(new Error(failed));
            else resolve();
          },
          (event: PullEvent) => {
            const line = progress.line(event);
            if (line) onLine(line);
          },
        );
      });
    } catch (error) {
      throw this.wrap(error, `pull ${ref}`);
    }
    const info = await this.imageInfo(ref);
    if (!info) throw new DrydockError("image_pull_failed", `pulled ${ref}, but the engine does not show it`);
    const digest = image ? repoDigestOf(info.repoDigests, image.registry, image.path) : undefined;
    log.info(`pulled ${ref}: ${info.id.replace(/^sha256:/, "").slice(0, 12)}${digest ? ` (${digest})` : ""}`);
    return { id: info.id, ...(digest ? { digest } : {}) };
  }

  /** Builds an image from a tar of the build context; each line of build output goes to onLine. */
  async buildImage(
    context: Readable,
    options: {
      tag: string;
      buildArgs: Record<string, string>;
      labels?: Record<string, string>;
      /** The Dockerfile's path in the context (default: Dockerfile). */
      dockerfile?: string;
      /** The stage to build (default: the last). */
      target?: string;
    },
    onLine: (line: string) => void,
  ): Promise<void> {
    log.info(`building image ${options.tag}`);
    const stream = await this.docker.buildImage(context, {
      t: options.tag,
      buildargs: options.buildArgs,
      labels: options.labels,
      ...(options.dockerfile ? { dockerfile: options.dockerfile } : {}),
      ...(options.target ? { target: options.target } : {}),
      rm: true,
      forcerm: true,
    });
    await new Promise<void>((resolve, reject) => {
      this.docker.modem.followProgress(
        stream,
        (error: Error | null, output: Array<{ error?: string }>) => {
          const failed = error ?? output.find((o) => o.error);
          if (failed) {
            reject(
              new DrydockError(
                "image_build_failed",
                `building ${options.tag} failed: ${error ? error.message : (failed as { error: string }).error}`,
              ),
            );
          } else resolve();
        },
        (event: { stream?: string; status?: string; error?: string }) => {
          const text = event.stream ?? event.status ?? event.error ?? "";
          for (const line of text.split("\n")) if (line.trim()) onLine(line.trimEnd());
        },
      );
    });
  }

  async createBox(spec: ContainerSpec): Promise<string> {
    try {
      const container = await this.docker.createContainer(toCreateOptions(spec));
      if (spec.runtime) this.boxRuntimes.set(container.id, spec.runtime);
      if (spec.endsWithMaker) this.holders.set(container.id, undefined);
      log.debug(
        `created ${short(container.id)} from ${spec.image}${spec.runtime ? ` (${spec.runtime})` : ""}`,
      );
      return container.id;
    } catch (error) {
      if ((error as { statusCode?: number }).statusCode === 404) throw new ImageMissingError(spec.image);
      throw this.wrap(error, `create a container from ${spec.image}`);
    }
  }

  async start(id: string): Promise<void> {
    try {
      if (this.holders.has(id) && this.holders.get(id) === undefined)
        this.holders.set(id, await this.hold(id));
      await this.docker.getContainer(id).start();
      log.debug(`started ${short(id)}`);
    } catch (error) {
      if ((error as { statusCode?: number }).statusCode === 304) return;
      throw this.wrap(error, `start ${short(id)}`);
    }
  }

  /**
   * Attaches to a box's stdin and keeps the connection without ever writing: when this process
   * ends, however it ends, the kernel closes it, the engine closes the box's stdin, and the box's
   * first process (HOLDER_COMMAND) ends the box. The socket does not keep this process alive.
   */
  private async hold(id: string): Promise<NodeJS.ReadWriteStream> {
    const stream = (await this.docker.getContainer(id).attach({
      stream: true,
      stdin: true,
      stdout: false,
      stderr: false,
      hijack: true,
    })) as NodeJS.ReadWriteStream & { unref?: () => void };
    stream.on("error", (error: Error) =>
      log.debug(`${short(id)}: its stdin attach failed: ${error.message}`),
    );
    stream.unref?.();
    return stream;
  }

  /** Removes a box and everything in it; a box already gone is not an error. */
  async remove(id: string): Promise<void> {
    this.boxRuntimes.delete(id);
    const holder = this.holders.get(id);
    this.holders.delete(id);
    (holder as { destroy?: () => void } | undefined)?.destroy?.();
    try {
      await this.docker.getContainer(id).remove({ force: true, v: true });
      log.debug(`removed ${short(id)}`);
    } catch (error) {
      const code = (error as { statusCode?: number }).statusCode;
      // 404: gone already; 409: removal already in progress elsewhere; it will finish without us.
      if (code !== 404 && code !== 409) throw this.wrap(error, `remove ${short(id)}`);
    }
    this.streams.end(id);
  }

  /** Holds an exec stream open to box `id` until it closes, so that removing the box ends it. */
  trackStream(id: string, stream: Duplex): void {
    this.streams.track(id, stream);
  }

  async isRunning(id: string): Promise<boolean> {
    try {
      const info = await this.docker.getContainer(id).inspect();
      return info.State.Running === true;
    } catch (error) {
      if ((error as { statusCode?: number }).statusCode === 404) return false;
      throw this.wrap(error, `inspect ${short(id)}`);
    }
  }

  async boxState(id: string): Promise<BoxState | undefined> {
    try {
      const { State } = await this.docker.getContainer(id).inspect();
      return State.Running
        ? { running: true }
        : { running: false, exitCode: State.ExitCode, oomKilled: State.OOMKilled };
    } catch (error) {
      if ((error as { statusCode?: number }).statusCode === 404) return undefined;
      throw this.wrap(error, `inspect ${short(id)}`);
    }
  }

  async inspect(id: string): Promise<Docker.ContainerInspectInfo> {
    try {
      return await this.docker.getContainer(id).inspect();
    } catch (error) {
      throw this.wrap(error, `inspect ${short(id)}`);
    }
  }

  /**
   * The argv that runs `argv` on a terminal inside the box under the box's runtime (under runsc,
   * through `script`: see runtime-terminal.ts). A box that is gone gets argv as it is, so the exec
   * reports the box gone.
   */
  async terminalArgv(id: string, argv: string[], size: { cols: number; rows: number }): Promise<string[]> {
    if (!this.boxRuntimes.has(id)) {
      try {
        this.boxRuntimes.set(id, (await this.docker.getContainer(id).inspect()).HostConfig.Runtime);
      } catch {
        return argv;
      }
    }
    return terminalArgv(argv, this.boxRuntimes.get(id), size);
  }

  /** Boxes carrying a label (any value), or a label with the given value. */
  async listBoxes(label: string, value?: string): Promise<BoxSummary[]> {
    const filter = value === undefined ? label : `${label}=${value}`;
    let list: Docker.ContainerInfo[];
    try {
      list = await this.docker.listContainers({ all: true, filters: { label: [filter] } });
    } catch (error) {
      throw this.wrap(error, `list boxes labelled ${filter}`);
    }
    return list.map((c) => ({
      id: c.Id,
      name: (c.Names[0] ?? "").replace(/^\//, ""),
      labels: c.Labels,
      state: c.State,
      createdAt: new Date(c.Created * 1000),
    }));
  }

  /** Runs a program in a box (no shell) and collects its output; see ExecOptions for limits. */
  async exec(id: string, argv: string[], options: ExecOptions = {}): Promise<ExecResult> {
    try {
      const result = await runExec(this.docker.getContainer(id), argv, options, (stream) =>
        this.trackStream(id, stream),
      );
      // No status: the stream ended without the program ending, as when the box went.
      if (result.exitCode === -1 && !(await this.isRunning(id))) throw new BoxGoneError(short(id));
      return result;
    } catch (error) {
      if (error instanceof DrydockError) throw error;
      if (isGone(error)) throw new BoxGoneError(short(id), { cause: error });
      throw this.wrap(error, `exec ${argv[0]} in ${short(id)}`);
    }
  }

  /** Starts argv in the box on a terminal of its own; see exec-terminal.ts. */
  openTerminal(id: string, argv: string[], options: TerminalExecOptions = {}): Promise<TerminalExec> {
    return openTerminalExec(this, id, argv, options);
  }

  private wrap(error: unknown, what: string): Error {
    const code = (error as { code?: string }).code;
    if (code === "ECONNREFUSED" || code === "ENOENT" || code === "EACCES") {
      return new EngineUnavailableError(`${what}: ${(error as Error).message}`, { cause: error });
    }
    const message = (error as { json?: { message?: string } }).json?.message ?? (error as Error).message;
    log.debug(`${what} failed: ${message}`);
    return new DrydockError("engine_error", `${what} failed: ${message}`, { cause: error });
  }
}

/** The engine's answer when a container was stopped (409 "is not running") or removed (404). */
function isGone(error: unknown): boolean {
  const status = (error as { statusCode?: number }).statusCode;
  const message = (error as { json?: { message?: string } }).json?.message ?? (error as Error).message;
  return status === 404 || (status === 409 && /is not running|is restarting|is paused/.test(message));
}

/** The registry digest among an image's RepoDigests that belongs to one repository. */
export function repoDigestOf(repoDigests: string[], registry: string, path: string): string | undefined {
  return repoDigests.find((d) => {
    const parsed = parseImageReference(d);
    return parsed?.registry === registry && parsed.path === path;
  });
}
