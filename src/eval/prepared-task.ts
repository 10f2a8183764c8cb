/**
 * With several attempts per task, the task's setup runs once: the first attempt to start makes a
 * box, runs setup there and checkpoints it (ignored files too: what setup installs in the
 * workspace, a virtualenv or node_modules, is usually ignored); every attempt's box, and every
 * box the tests run in, is then a fork of it (session-fork.ts), with the workspace, git's state
 * and the shell's directory and exported variables as setup left them. The prepared box is
 * removed once the task's last attempt has ended.
 *
 * What a fork does not carry is what setup left outside /workspace (a package installed in the
 * home directory, a file in /tmp, a process it started): a task whose setup needs those keeps
 * working only with `--setup-per-attempt`. When setup fails, or the prepared box cannot be
 * checkpointed (past the size limit), each attempt runs setup itself, as without this.
 */
import type { Session, SessionOptions } from "../session/session.js";
import type { SessionManager } from "../session/session-manager.js";
import { forkSession } from "../session/session-fork.js";
import { describeError } from "../util/errors.js";
import { logger } from "../util/log.js";
import { remainingMs } from "./eval-agent.js";
import type { EvalTask } from "./eval-task.js";

const log = logger("eval");

/** The checkpoint every fork of a prepared box starts from (and holds under this name). */
export const SETUP_CHECKPOINT = "setup";

interface Prepared {
  session: Session;
  manager: SessionManager;
  /** What setup printed, for each attempt's log. */
  setupLog: string;
  setupMs: number;
}

/** A box forked from the task's prepared box, with what the attempt's log says of it. */
export interface ForkedBox {
  session: Session;
  log: string;
  /** The time setup took, once, in the prepared box. */
  setupMs: number;
}

export class PreparedTasks {
  private readonly prepared = new Map<string, Promise<Prepared | undefined>>();
  private readonly remaining = new Map<string, number>();

  /** `attempts`: how many attempts of each task (by id) this run will start. */
  constructor(attempts: ReadonlyMap<string, number>) {
    for (const [id, n] of attempts) this.remaining.set(id, n);
  }

  /**
   * A new box for an attempt of `task` (or its tests, with `labels`), forked from the task's
   * prepared box, made now by the first caller; undefined when the task has none (its setup
   * failed, or the box could not be checkpointed): the attempt then starts a box of its own.
   */
  private async fork(
    task: EvalTask,
    options: SessionOptions,
    manager: SessionManager,
    runSetup: (session: Session) => Promise<{ ok: boolean; log: string }>,
    labels: Record<string, string> = {},
  ): Promise<ForkedBox | undefined> {
    let preparing = this.prepared.get(task.id);
    if (!preparing) {
      preparing = prepare(task, options, manager, runSetup);
      this.prepared.set(task.id, preparing);
    }
    const prepared = await preparing;
    if (!prepared) return undefined;
    const [session] = await forkSession(
      prepared.session,
      { n: 1, checkpoint: SETUP_CHECKPOINT },
      (forkOptions) => manager.create({ ...forkOptions, labels: { ...forkOptions.labels, ...labels } }),
      (made) => manager.destroy(made.id),
    );
    return {
      session: session!,
      log: `${prepared.setupLog}$ (setup ran once for this task's attempts, in session ${prepared.session.id}; this box is a fork of it)\n`,
      setupMs: prepared.setupMs,
    };
  }

  /**
   * `fork` for attempt `attempt`, with the task's setup run by the shell until `deadline`;
   * undefined (the attempt starts a box of its own) for a task without setup, or when no fork
   * could be made.
   */
  async forAttempt(
    task: EvalTask,
    attempt: number,
    options: SessionOptions,
    manager: SessionManager,
    deadline: number,
    signal: AbortSignal,
    labels?: Record<string, string>,
  ): Promise<ForkedBox | undefined> {
    const setup = task.setup;
    if (!setup) return undefined;
    const runSetup = async (box: Session) => {
      const r = await box.bash(setup, { timeoutMs: remainingMs(deadline), signal });
      return { ok: !r.timedOut && r.exitCode === 0, log: `$ ${setup}  (setup)\n${r.output}\n` };
    };
    try {
      return await this.fork(task, options, manager, runSetup, labels);
    } catch (error) {
      if (signal.aborted) throw error;
      log.warn(
        `${task.id}#${attempt}: no fork of the prepared box (${describeError(error)}); starting a box of its own`,
      );
      return undefined;
    }
  }

  /** An attempt of `task` has ended: the prepared box goes with the task's last. */
  async done(taskId: string): Promise<void> {
    const left = (this.remaining.get(taskId) ?? 1) - 1;
    this.remaining.set(taskId, left);
    if (left <= 0) await this.remove(taskId);
  }

  /** Removes every prepared box still there (the run ended or was stopped). */
  async close(): Promise<void> {
    await Promise.allSettled([...this.prepared.keys()].map((id) => this.remove(id)));
  }

  private async remove(taskId: string): Promise<void> {
    const preparing = this.prepared.get(taskId);
    if (!preparing) return;
    // Kept in the map as "none": an attempt run again later starts a box of its own.
    this.prepared.set(taskId, Promise.resolve(undefined));
    const prepared = await preparing.catch(() => undefined);
    if (prepared) await prepared.manager.destroy(prepared.session.id).catch(() => undefined);
  }
}

async function prepare(
  task: EvalTask,
  options: SessionOptions,
  manager: SessionManager,
  runSetup: (session: Session) => Promise<{ ok: boolean; log: string }>,
): Promise<Prepared | undefined> {
  let session: Session | undefined;
  try {
    session = await manager.create(options);
    const started = Date.now();
    const setup = await runSetup(session);
    const setupMs = Date.now() - started;
    if (!setup.ok) {
      await manager.destroy(session.id).catch(() => undefined);
      return undefined;
    }
    await session.checkpoint(SETUP_CHECKPOINT, { includeIgnored: true });
    return { session, manager, setupLog: setup.log, setupMs };
  } catch (error) {
    log.warn(
      `${task.id}: no prepared box to fork its attempts from (${describeError(error)}); each runs setup`,
    );
    if (session) await manager.destroy(session.id).catch(() => undefined);
    return undefined;
  }
}
