/**
 * The server behind every transport: one engine, one session manager and one task-stack store
 * per process; one MCP server object per connected client, all sharing them but each seeing only
 * its own sessions.
 */
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import type { BoxEngine } from "../engine/box-engine.js";
import { closeEngine, dockerEngine, roomOf } from "../engine/connect-engine.js";
import { Engine } from "../engine/engine.js";
import { pushImage } from "../engine/image-push.js";
import { secretRedactor } from "../gateway/redact.js";
import { loadProviderKeys, secretValues } from "../gateway/provider-keys.js";
import { clusterImageMissing, clusterSandboxImage, readySandboxImage } from "../sandbox/sandbox-image.js";
import type { SessionOptions } from "../session/session.js";
import { poolProfile } from "../session/pool-fit.js";
import { SessionManager } from "../session/session-manager.js";
import { TaskStackStore } from "../tasks/task-stack-store.js";
import { allTools } from "../tools/all-tools.js";
import { defaultToolSets, pickTools } from "../tools/tool-sets.js";
import type { AnyToolDefinition, ToolServices } from "../tools/tool.js";
import { EnvironmentImages } from "../environment/environment-images.js";
import { InvalidArgumentError, describeError } from "../util/errors.js";
import { addLogRedactor, addLogSink, logger, type LogLevel } from "../util/log.js";
import { openHostRepo } from "../workspace/host-repo.js";
import { defaultReserveMiB, type AdmissionFigure } from "./admission-figure.js";
import { ClientSessions } from "./client-sessions.js";
import { MemoryAdmission } from "./memory-admission.js";
import { registerTools } from "./register-tools.js";
import { sandboxImagePresent, type PullMode } from "../environment/image-pulls.js";

const log = logger("server");

export interface DrydockServerConfig {
  /** The backend boxes run on, connected; default the Docker engine DOCKER_HOST names. The server closes it. */
  engine?: BoxEngine;
  repo: string;
  image?: string;
  sessionOptions?: Partial<SessionOptions>;
  /** Repositories clients may name in session_create besides `repo` (`--allow-repo`). */
  allowedRepos?: string[];
  /**
   * Sessions clients may hold at once (`--max-sessions`). Default: no count; sessions are admitted
   * while their boxes' memory use fits beside the reserve (`memoryReserveMB`).
   */
  maxSessions?: number;
  /**
   * Memory (MiB) sessions leave free on the engine's host, for the host and for boxes that grow
   * (`--memory-reserve-mb`). Default: a quarter of the host's memory, at least 1024.
   */
  memoryReserveMB?: number;
  /**
   * Keep sessions (`--keep-sessions`): boxes stay running at shutdown and, labelled kept, outlive a
   * server that dies for `keepTtlMs`; a later server adopts one when a client resumes it with its secret.
   */
  keepSessions?: boolean;
  /** How long a kept box outlives its dead server (`--keep-ttl`; default 24 hours). */
  keepTtlMs?: number;
  /** Where task stacks are kept (default: <state dir>/tasks). */
  tasksDir?: string;
  /**
   * Tool sets (or single tool names) clients see (`--tools`, see tools/tool-sets.ts); default
   * `core` (with `session_resume` when keeping sessions).
   */
  tools?: string[];
  /** List each tool's output schema in tools/list (`--output-schemas`; default false: see ListingOptions). */
  outputSchemas?: boolean;
  /** Extra tools (aider, workspace tools) and the services they need. */
  extraTools?: AnyToolDefinition[];
  extraServices?: Partial<ToolServices>;
  envFile?: string;
  /** Build and use the repository's environment (default true; `--no-env` turns it off). */
  environment?: boolean;
  /** CA bundle environment builds trust (default: the host's). */
  caCert?: string;
  /** Images environments may build on besides the sandbox image (`--allow-base-image`). */
  allowBaseImages?: string[];
  /** When images `allowBaseImages` covers are pulled (`--pull`; default missing). */
  pull?: PullMode;
  /**
   * On a cluster: the registry (`HOST[:PORT][/PATH]`) repositories' environment images are pushed
   * to after a build on the local Docker engine, as `…/drydock-env`; Pods name them by digest.
   * Without it a cluster's sessions use `image` as it is (`--env-registry`).
   */
  environmentRegistry?: string;
  /**
   * Warm pool: idle boxes kept ready for sessions on the defaults (size 0 or absent: none),
   * growing with demand to at most `maxSize` (default `size`) as admission allows.
   */
  pool?: { size: number; maxSize?: number; ttlMs?: number };
  /**
   * How often the running server removes boxes whose owner died (default: DRYDOCK_REAP_INTERVAL_S
   * in seconds, else 60 s; 0: only at start).
   */
  reapIntervalMs?: number;
}

export const DEFAULT_REAP_INTERVAL_MS = 60_000;
export const DEFAULT_KEEP_TTL_MS = 24 * 60 * 60_000;

/** The reaping interval DRYDOCK_REAP_INTERVAL_S asks for (seconds, 0 for none), else the default. */
export function reapIntervalFromEnv(value = process.env.DRYDOCK_REAP_INTERVAL_S): number {
  if (value === undefined || value.trim() === "") return DEFAULT_REAP_INTERVAL_MS;
  const seconds = Number(value);
  if (!Number.isFinite(seconds) || seconds < 0) {
    throw new InvalidArgumentError(
      "DRYDOCK_REAP_INTERVAL_S",
      `must be a number of seconds (0 turns periodic reaping off), not ${JSON.stringify(value)}; unset it for the default of ${DEFAULT_REAP_INTERVAL_MS / 1000}`,
    );
  }
  return Math.round(seconds * 1000);
}

const mcpLevel: Record<LogLevel, "debug" | "info" | "warning" | "error"> = {
  debug: "debug",
  info: "info",
  warning: "warning",
  error: "error",
};

export class DrydockServer {
  private readonly clients = new Map<string, McpServer>();
  private closing: Promise<void> | undefined;

  private constructor(
    readonly config: DrydockServerConfig,
    readonly manager: SessionManager,
    readonly access: ClientSessions,
    readonly redact: (text: string) => string,
    readonly image: string,
    readonly tools: AnyToolDefinition[],
  ) {}

  /** Checks the repository (a clear error before any client connects), the engine and the image. */
  static async start(config: DrydockServerConfig): Promise<DrydockServer> {
    const tools = pickTools(
      allTools(config.extraTools),
      config.tools ?? defaultToolSets(config.keepSessions),
    );
    const reapEveryMs = config.reapIntervalMs ?? reapIntervalFromEnv();
    const repo = await openHostRepo(config.repo, "--repo");
    const engine = config.engine ?? (await Engine.connect());
    const docker = dockerEngine(engine);
    const image = config.image ?? (docker ? await readySandboxImage(docker) : await clusterSandboxImage());
    if (docker) await sandboxImagePresent(docker, image, config.pull, (line) => log.info(line));
    else if (!(await engine.hasImage(image))) throw clusterImageMissing(engine.name, image);
    // On a cluster, the probe of boxes' isolation runs the server's own image by default.
    if (!docker) (engine as { trustProbeImage?: (image: string) => void }).trustProbeImage?.(image);
    const builder = await environmentBuilder(config, engine, image);
    const environments =
      config.environment === false || !builder
        ? undefined
        : new EnvironmentImages(builder.engine, {
            baseImage: image,
            caCert: config.caCert,
            allowBaseImages: config.allowBaseImages,
            pull: config.pull,
          });
    /** The name a box of the engine's uses for an image built here: pushed first on a cluster. */
    const boxImage = (built: string, onLine?: (line: string) => void): Promise<string> =>
      builder?.publish ? builder.publish(built, onLine) : Promise.resolve(built);
    // The pool holds boxes of the served repository's environment image: started now when that
    // image exists (or the repository has none), else once a background build has made it.
    // A definition that cannot be read does not stop the server: each session that needs it says
    // why (file, line, fix), and no pool is kept for an image that cannot be made.
    let unreadable = false;
    const served = environments
      ? await environments.status(repo.root).catch((error: unknown) => {
          unreadable = true;
          log.warn(`the environment of ${repo.root} cannot be used: ${describeError(error)}`);
          return undefined;
        })
      : undefined;
    // On a cluster an environment image is pushed before a pool can hold it (below).
    const poolReady = !unreadable && (!served || (served.present && !builder?.publish));
    // Growth past the pool's base asks admission, which is made below, once the pool has started.
    const later: { admission?: () => Promise<AdmissionFigure> } = {};
    const poolOptions = (poolImage: string) =>
      config.pool && {
        ...config.pool,
        profile: poolProfile(poolImage, config.sessionOptions),
        room: async () =>
          later.admission ? later.admission() : { fit: 0, why: "admission is not set up yet" },
        // Boxes wait holding the served repository's commit: a session on it sends only the change.
        prefillRepo: repo.root,
      };
    const manager = await SessionManager.start(engine, {
      pool: poolReady ? poolOptions(served?.image ?? image) : undefined,
      reapEveryMs,
      keepTtlMs: config.keepSessions ? (config.keepTtlMs ?? DEFAULT_KEEP_TTL_MS) : undefined,
    });
    if (environments && served && !unreadable && !poolReady && config.pool && config.pool.size > 0) {
      log.info(`building the environment of ${repo.root} (${served.definition.file}) for the warm pool`);
      environments
        .imageFor({ repo: repo.root })
        .then(async (built) => manager.startPool(poolOptions(await boxImage(built.image))!))
        .catch((error: unknown) =>
          log.warn(
            `the environment of ${repo.root} did not build; sessions will say why: ${describeError(error)}`,
          ),
        );
    }
    const store = new TaskStackStore({ dir: config.tasksDir });
    const hostMiB = (await engine.capacity()).memoryMB;
    const reserveMiB = config.memoryReserveMB ?? defaultReserveMiB(hostMiB);
    const allowedRepos: string[] = [];
    for (const path of config.allowedRepos ?? []) {
      allowedRepos.push((await openHostRepo(path, "--allow-repo")).root);
    }
    const access = new ClientSessions(manager, store, {
      repo: repo.root,
      image,
      imageFor: environments
        ? async (repoPath, ref, onLine) =>
            boxImage((await environments.imageFor({ repo: repoPath, ref, onLine })).image, onLine)
        : undefined,
      options: config.sessionOptions ?? {},
      allowedRepos,
      maxSessions: config.maxSessions,
      // On a cluster a box takes its requests (equal to its limits) from a node and the namespace's quota.
      admission: docker ? new MemoryAdmission(docker, { hostMiB, reserveMiB }) : undefined,
      clusterRoom: roomOf(engine),
    });
    later.admission = () => access.admission();
    const redact = secretRedactor(secretValues(loadProviderKeys({ envFile: config.envFile })));
    addLogRedactor(redact);
    log.info(`serving ${repo.root} with image ${image}, ${tools.length} tools`);
    log.info(`admission: ${(await access.admission()).why}`);
    return new DrydockServer({ ...config, repo: repo.root }, manager, access, redact, image, tools);
  }

  /** A new MCP server object for one client; connect it to that client's transport. */
  connectClient(clientId: string): McpServer {
    const server = new McpServer(
      { name: "drydock", version: "0.1.0" },
      {
        capabilities: { logging: {} },
        instructions: instructionsFor(this.tools),
      },
    );
    const services = {
      sessions: this.access,
      taskStacks: this.access,
      ...this.config.extraServices,
    } as ToolServices;
    registerTools(server, this.tools, clientId, services, this.redact, {
      outputSchemas: this.config.outputSchemas,
    });
    const removeSink = addLogSink((record) => {
      if (record.level === "debug") return;
      void server.server
        .sendLoggingMessage({
          level: mcpLevel[record.level],
          logger: `drydock.${record.scope}`,
          data: record.message,
        })
        .catch(() => undefined);
    });
    server.server.onclose = () => removeSink();
    this.clients.set(clientId, server);
    return server;
  }

  /** A client went away: its sessions are removed (unless --keep-sessions). */
  async disconnectClient(clientId: string): Promise<void> {
    const server = this.clients.get(clientId);
    this.clients.delete(clientId);
    await server?.close().catch(() => undefined);
    if (!this.config.keepSessions) await this.access.closeClient(clientId);
    else {
      const kept = this.access.releaseClient(clientId);
      if (kept.length > 0) {
        log.info(
          `kept ${kept.length} session(s) of a client that went away: ${kept.join(", ")}; the client that created one continues it with session_resume and its session_secret`,
        );
      }
    }
  }

  /** Removes every session this process owns (unless --keep-sessions) and closes every client. */
  shutdown(): Promise<void> {
    this.closing ??= (async () => {
      await Promise.allSettled([...this.clients.values()].map((s) => s.close()));
      this.clients.clear();
      if (this.config.keepSessions) {
        await this.manager.closePool();
        await this.manager.settleAdoptions();
        const kept = this.manager.detachAll();
        if (kept.length)
          log.info(`kept ${kept.length} session(s) for inspection: ${kept.map((s) => s.id).join(", ")}`);
      } else {
        await this.manager.closeAll();
      }
      await closeEngine(this.manager.engine);
    })();
    return this.closing;
  }
}

/** The server's instructions, naming only tools this server lists. */
export function instructionsFor(tools: readonly AnyToolDefinition[]): string {
  const has = (name: string) => tools.some((t) => t.name === name);
  const ways = [
    has("bash") && "run commands with bash",
    has("file_editor")
      ? "edit files with file_editor"
      : has("str_replace_based_edit_tool") && "edit files with str_replace_based_edit_tool",
    has("aider_ai_code") && "delegate edits to aider_ai_code",
  ].filter((way): way is string => typeof way === "string");
  const parts = [
    `drydock gives you a sandboxed copy of a git repository in a hardened container${ways.length ? `: ${ways.join(", ")}` : ""}.`,
    has("session_apply")
      ? "Nothing you do reaches the host until session_apply."
      : "Nothing you do reaches the host until the operator applies the session's diff.",
  ];
  if (has("create_new_task")) {
    parts.push("Keep your plan in the task stack (create_new_task, get_current_task).");
  }
  return parts.join(" ");
}

/**
 * Where repositories' environments are built: the server's Docker engine; on a cluster, the local
 * Docker engine when `environmentRegistry` names where to push them (each built image is pushed
 * once, as `REGISTRY/drydock-env`, and boxes name it by digest); else nowhere, said once.
 */
async function environmentBuilder(
  config: DrydockServerConfig,
  engine: BoxEngine,
  image: string,
): Promise<
  | { engine: Engine; publish?: (built: string, onLine?: (line: string) => void) => Promise<string> }
  | undefined
> {
  if (config.environment === false) return undefined;
  const docker = dockerEngine(engine);
  if (docker) return { engine: docker };
  if (!config.environmentRegistry) {
    log.warn(
      `${engine.name}: repositories' environment definitions are not built for a cluster without --env-registry; sessions use ${image} (pass --image to choose another, --no-env to silence this)`,
    );
    return undefined;
  }
  const local = await Engine.connect({ timeoutMs: 5_000 }).catch(() => undefined);
  if (!local || !(await local.answers())) {
    throw new InvalidArgumentError(
      "--env-registry",
      `building environments for ${engine.name} needs a Docker engine here to build on, and none answers (DOCKER_HOST); start one, or leave out --env-registry (sessions then use ${image})`,
    );
  }
  // The environments are built on the server's image: the local engine needs it (pulled by digest).
  await sandboxImagePresent(local, image, config.pull, (line) => log.info(line));
  const target = `${config.environmentRegistry.replace(/\/+$/, "")}/drydock-env`;
  const pushed = new Map<string, Promise<string>>();
  return {
    engine: local,
    publish: (built, onLine) => {
      let named = pushed.get(built);
      if (!named) {
        named = pushImage(local, built, target, onLine).then((p) => p.byDigest);
        pushed.set(built, named);
        named.catch(() => pushed.delete(built));
      }
      return named;
    },
  };
}
