/**
 * A running box: one hardened container, created from a profile, with helpers to run programs
 * in it as the box user. Removing it removes everything in it.
 */
import { short, type BoxEngine } from "../engine/box-engine.js";
import type { ExecOptions, ExecResult } from "../engine/exec.js";
import {
  LABEL_CREATED,
  LABEL_OWNER,
  LABEL_SESSION,
  LABEL_STATE,
  currentOwner,
  formatOwner,
} from "../engine/labels.js";
import { logger } from "../util/log.js";
import { stateDir } from "../util/paths.js";
import {
  BOX_USER,
  WORKSPACE,
  boxLimits,
  boxSpec,
  relaxations,
  type BoxLimits,
  type BoxOptions,
} from "./box-profile.js";
import { checkRuntimeNetwork, resolveRuntime, runtimeFromEnv, type BoxRuntime } from "./box-runtime.js";

const log = logger("box");

export class Box {
  private removed = false;

  private constructor(
    readonly engine: BoxEngine,
    readonly id: string,
    readonly sessionId: string,
    readonly image: string,
    readonly limits: BoxLimits,
  ) {}

  /**
   * Creates and starts a box for a session; labels name the session, the owner and the time. The
   * runtime is options.runtime, else DRYDOCK_RUNTIME, else runc, checked against the engine's.
   */
  static async create(engine: BoxEngine, sessionId: string, options: BoxOptions): Promise<Box> {
    const runtime: BoxRuntime = await resolveRuntime(
      engine,
      options.runtime ?? runtimeFromEnv(),
      options.runtime ? "runtime" : "DRYDOCK_RUNTIME",
    );
    checkRuntimeNetwork(runtime, options.network, "network");
    for (const r of relaxations(options)) log.warn(`session ${sessionId}: relaxed: ${r}`);
    const labels = {
      ...options.labels,
      [LABEL_SESSION]: sessionId,
      [LABEL_OWNER]: formatOwner(currentOwner()),
      [LABEL_STATE]: stateDir(),
      [LABEL_CREATED]: new Date().toISOString(),
    };
    const id = await engine.createBox(boxSpec({ ...options, runtime, labels }, `drydock-${sessionId}`));
    const box = new Box(engine, id, sessionId, options.image, boxLimits(options));
    try {
      await engine.start(id);
    } catch (error) {
      await engine.remove(id);
      throw error;
    }
    log.debug(`session ${sessionId}: box ${short(id)} started (runtime ${runtime})`);
    return box;
  }

  /** Adopts an existing container (a pooled box handed to a session). */
  static adopt(engine: BoxEngine, id: string, sessionId: string, image: string, limits: BoxLimits): Box {
    return new Box(engine, id, sessionId, image, limits);
  }

  get shortId(): string {
    return short(this.id);
  }

  /** Runs a program as the box user in /workspace. */
  exec(argv: string[], options: ExecOptions = {}): Promise<ExecResult> {
    return this.engine.exec(this.id, argv, { user: BOX_USER, workdir: WORKSPACE, ...options });
  }

  /** Runs a short bash script with positional arguments (never interpolated into the script). */
  sh(script: string, args: string[] = [], options: ExecOptions = {}): Promise<ExecResult> {
    return this.exec(["bash", "-c", script, "drydock", ...args], options);
  }

  isRunning(): Promise<boolean> {
    return this.engine.isRunning(this.id);
  }

  async remove(): Promise<void> {
    if (this.removed) return;
    this.removed = true;
    await this.engine.remove(this.id);
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.remove();
  }
}
