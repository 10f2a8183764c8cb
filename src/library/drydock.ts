/**
 * The library's entry point: `Drydock.local()` runs sessions in this process (no MCP hop), and
 * `Drydock.remote({ url, token })` runs them on a `drydock serve --http`; both hand out the same
 * Sandbox. A Drydock holds its engine connection or MCP session only while it has sandboxes open
 * (or being made), so a program that closes its sandboxes can exit without closing it.
 */
import { resolve } from "node:path";
import type { BoxEngine } from "../engine/box-engine.js";
import { closeEngine, connectEngine, dockerEngine } from "../engine/connect-engine.js";
import { EnvironmentImages } from "../environment/environment-images.js";
import { clusterSandboxImage, readySandboxImage } from "../sandbox/sandbox-image.js";
import { SessionManager } from "../session/session-manager.js";
import { InvalidArgumentError } from "../util/errors.js";
import { logger } from "../util/log.js";
import { LocalBackend } from "./local-backend.js";
import { RemoteBackend } from "./remote-backend.js";
import { RemoteClient } from "./remote-client.js";
import { Sandbox } from "./sandbox.js";
import type { SandboxBackend } from "./sandbox-backend.js";
import type { PullMode } from "../environment/image-pulls.js";

const log = logger("library");

/** Longest per-command limit a session may have: one day, as session_create allows. */
const MAX_TIMEOUT_MS = 86_400_000;
/** session_create starts a box and copies the repository in, and may build its environment first. */
const CREATE_TIMEOUT_MS = 600_000;

export interface CreateOptions {
  /**
   * The git repository to copy in, a path on the machine drydock runs on; relative paths resolve
   * against this process's cwd. Default: in-process ".", remote the server's `--repo`.
   */
  repo?: string;
  /** A branch, tag or commit to start from instead of the working tree as it is. */
  ref?: string;
  /** The session's default per-command time limit in ms (default 120,000); remotely whole seconds. */
  timeoutMs?: number;
  /** Memory limit in MiB (default 2048; remotely at most the server's). */
  memoryMB?: number;
  /** CPU limit (default 1; remotely at most the server's). */
  cpus?: number;
  /**
   * Copy untracked, unignored dependency trees (`node_modules`, a virtualenv, Cargo's `target`)
   * into the box too. Default false: they are left out and the start logs which, with their sizes.
   * In-process only: a server decides with `drydock serve --include-untracked-dependencies`.
   */
  includeUntrackedDependencies?: boolean;
}

export interface LocalOptions {
  /**
   * Where boxes run, as `--engine` says: a Docker engine URL (default DOCKER_HOST) or a Kubernetes
   * namespace, `kubernetes:NAMESPACE?context=NAME&kubeconfig=PATH` (docs/kubernetes.md).
   */
  engine?: string;
  /** The sandbox image (default: DRYDOCK_IMAGE, else the one `drydock image build` made). */
  image?: string;
  /**
   * Use the repository's environment definition (.drydock/environment.yaml or devcontainer.json),
   * building its image first when missing, as `drydock run` does. Default true.
   */
  environment?: boolean;
  /**
   * Images environments may build on besides the sandbox image and the repository's own
   * environment images, as `--allow-base-image` (a relaxation, logged at each use). Default none.
   */
  allowBaseImages?: string[];
  /**
   * When an image `allowBaseImages` covers is pulled from its registry, as `--pull`: "missing"
   * (default), "always" (again at its first use), "never".
   */
  pull?: PullMode;
}

export interface RemoteOptions {
  /** The MCP endpoint `drydock serve --http` prints, e.g. http://127.0.0.1:8765/mcp. */
  url: string;
  /** The server's bearer token (default: DRYDOCK_TOKEN). */
  token?: string;
}

/** Where sandboxes are made: this process, or a server. */
interface Flavour {
  create(options: CreateOptions): Promise<SandboxBackend>;
  /** Lets go of the engine or the server while no sandbox is open. */
  release(): Promise<void>;
}

export class Drydock implements AsyncDisposable {
  private readonly open = new Set<Sandbox>();
  private creating = 0;
  /** Letting go after the last sandbox closed; close() waits for it. */
  private releasing: Promise<void> = Promise.resolve();

  private constructor(private readonly flavour: Flavour) {}

  /** Sessions in this process, on the local Docker Engine. */
  static local(options: LocalOptions = {}): Drydock {
    if (options.image !== undefined && (typeof options.image !== "string" || options.image === "")) {
      throw new InvalidArgumentError("image", "must be an image name such as drydock-sandbox:latest");
    }
    return new Drydock(new LocalFlavour(options));
  }

  /** Sessions on a running `drydock serve --http`, through its MCP tools. */
  static remote(options: RemoteOptions): Drydock {
    let url: URL | undefined;
    try {
      url = new URL(options.url);
    } catch {
      url = undefined;
    }
    if (url === undefined || (url.protocol !== "http:" && url.protocol !== "https:")) {
      throw new InvalidArgumentError(
        "url",
        `${JSON.stringify(options.url)} is not an http(s) URL; pass the one \`drydock serve --http\` prints, e.g. http://127.0.0.1:8765/mcp`,
      );
    }
    const token = options.token ?? process.env.DRYDOCK_TOKEN;
    return new Drydock(new RemoteFlavour(url.href, token || undefined));
  }

  /** Starts a box holding a copy of the repository; close it (or `await using`) when done. */
  async create(options: CreateOptions = {}): Promise<Sandbox> {
    const checked = checkCreateOptions(options);
    this.creating++;
    let backend: SandboxBackend;
    try {
      backend = await this.flavour.create(checked);
    } finally {
      this.creating--;
    }
    return this.adopt(backend);
  }

  /** A sandbox of this Drydock around a backend (a new one, or a fork's). */
  private adopt(backend: SandboxBackend): Sandbox {
    const sandbox: Sandbox = new Sandbox(
      backend,
      () => this.closed(sandbox),
      (forked) => this.adopt(forked),
    );
    this.open.add(sandbox);
    return sandbox;
  }

  /** Closes every sandbox still open and lets go of the engine or the server. */
  async close(): Promise<void> {
    await Promise.allSettled([...this.open].map((s) => s.close()));
    await this.releasing;
    await this.flavour.release();
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }

  private closed(sandbox: Sandbox): void {
    this.open.delete(sandbox);
    if (this.open.size === 0 && this.creating === 0) {
      this.releasing = this.flavour
        .release()
        .catch((error: Error) => log.warn(`could not let go of the engine or server: ${error.message}`));
    }
  }
}

function checkCreateOptions(options: CreateOptions): CreateOptions {
  const { repo, ref, timeoutMs, memoryMB, cpus } = options;
  if (repo !== undefined && (typeof repo !== "string" || repo.trim() === "")) {
    throw new InvalidArgumentError("repo", 'must be the path of a git repository, e.g. "."');
  }
  if (ref !== undefined && (typeof ref !== "string" || ref.trim() === "")) {
    throw new InvalidArgumentError(
      "ref",
      "must be a branch, tag or commit; leave it out for the working tree",
    );
  }
  if (
    timeoutMs !== undefined &&
    (!Number.isInteger(timeoutMs) || timeoutMs < 1000 || timeoutMs > MAX_TIMEOUT_MS)
  ) {
    throw new InvalidArgumentError(
      "timeoutMs",
      `must be a whole number of milliseconds from 1000 to ${MAX_TIMEOUT_MS} (one day)`,
    );
  }
  if (memoryMB !== undefined && (!Number.isInteger(memoryMB) || memoryMB < 128)) {
    throw new InvalidArgumentError("memoryMB", "must be a whole number of MiB, at least 128");
  }
  if (cpus !== undefined && (typeof cpus !== "number" || !Number.isFinite(cpus) || cpus < 0.1)) {
    throw new InvalidArgumentError("cpus", "must be a number of CPUs, at least 0.1");
  }
  const include = options.includeUntrackedDependencies;
  if (include !== undefined && typeof include !== "boolean") {
    throw new InvalidArgumentError("includeUntrackedDependencies", "must be true or false");
  }
  return options;
}

class LocalFlavour implements Flavour {
  private manager: Promise<SessionManager> | undefined;

  constructor(private readonly options: LocalOptions) {}

  async create(options: CreateOptions): Promise<SandboxBackend> {
    const manager = await this.start();
    const repo = resolve(options.repo ?? ".");
    const session = await manager.create({
      repo,
      ref: options.ref,
      image: await this.image(manager.engine, repo, options.ref),
      commandTimeoutMs: options.timeoutMs,
      memoryMB: options.memoryMB,
      cpus: options.cpus,
      includeUntrackedDependencies: options.includeUntrackedDependencies,
    });
    return new LocalBackend(manager, session);
  }

  async release(): Promise<void> {
    const manager = this.manager;
    this.manager = undefined;
    const started = await manager?.catch(() => undefined);
    await started?.closeAll();
    if (started) await closeEngine(started.engine);
  }

  private start(): Promise<SessionManager> {
    this.manager ??= connectEngine(this.options.engine, { field: "engine" }).then((engine) =>
      SessionManager.start(engine),
    );
    const manager = this.manager;
    // An engine that did not answer is asked again by the next create.
    manager.catch(() => {
      if (this.manager === manager) this.manager = undefined;
    });
    return manager;
  }

  private async image(engine: BoxEngine, repo: string, ref: string | undefined): Promise<string> {
    const docker = dockerEngine(engine);
    // A cluster's nodes get images by push or import: no environment is built for them.
    if (!docker) return this.options.image ?? (await clusterSandboxImage());
    const base = this.options.image ?? (await readySandboxImage(docker));
    if (this.options.environment === false) return base;
    const status = await new EnvironmentImages(docker, {
      baseImage: base,
      allowBaseImages: this.options.allowBaseImages,
      pull: this.options.pull,
    }).imageFor({
      repo,
      ref,
      onLine: (line) => log.info(`environment: ${line}`),
    });
    return status.image;
  }
}

class RemoteFlavour implements Flavour {
  private client: Promise<RemoteClient> | undefined;

  constructor(
    private readonly url: string,
    private readonly token: string | undefined,
  ) {}

  async create(options: CreateOptions): Promise<SandboxBackend> {
    if (options.includeUntrackedDependencies !== undefined) {
      throw new InvalidArgumentError(
        "includeUntrackedDependencies",
        "is decided by the server, not per sandbox: start it with drydock serve --include-untracked-dependencies, and leave this option out",
      );
    }
    const client = await this.connect();
    const reply = await client.call(
      "session_create",
      {
        ...(options.repo === undefined ? {} : { repo: resolve(options.repo) }),
        ...(options.ref === undefined ? {} : { ref: options.ref }),
        ...(options.timeoutMs === undefined ? {} : { timeout_s: Math.ceil(options.timeoutMs / 1000) }),
        ...(options.memoryMB === undefined ? {} : { memory_mb: options.memoryMB }),
        ...(options.cpus === undefined ? {} : { cpus: options.cpus }),
      },
      { timeoutMs: CREATE_TIMEOUT_MS },
    );
    const limits = reply.limits as { command_timeout_s: number; max_output_bytes: number };
    return new RemoteBackend(client, {
      id: String(reply.session_id),
      repo: String(reply.repo),
      baseCommit: String(reply.base_commit),
      image: String(reply.image),
      box: String(reply.box),
      commandTimeoutMs: limits.command_timeout_s * 1000,
      maxOutputBytes: limits.max_output_bytes,
      ...(typeof reply.session_secret === "string" ? { sessionSecret: reply.session_secret } : {}),
    });
  }

  async release(): Promise<void> {
    const client = this.client;
    this.client = undefined;
    await (await client?.catch(() => undefined))?.close();
  }

  private connect(): Promise<RemoteClient> {
    this.client ??= RemoteClient.connect(this.url, this.token);
    const client = this.client;
    client.catch(() => {
      if (this.client === client) this.client = undefined;
    });
    return client;
  }
}
