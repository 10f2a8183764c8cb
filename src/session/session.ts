/**
 * A session: one box, the repository copied into it, and its persistent shell. The host never
 * shares a path with the box; files move as tar streams and changes come out as a diff.
 */
import { mkdir, rm } from "node:fs/promises";
import type { BoxEngine } from "../engine/box-engine.js";
import type { AddressRange } from "../gateway/egress-address-policy.js";
import type { EgressProxy } from "../gateway/egress-proxy.js";
import { noEgressReport, type EgressReport } from "../gateway/egress-tally.js";
import { Box } from "../sandbox/box.js";
import { openBoxChannel } from "../sandbox/box-channel.js";
import { DEFAULT_LIMITS, type BoxLimits, type BoxOptions } from "../sandbox/box-profile.js";
import type { StreamName } from "../sandbox/output-capture.js";
import type { PtyShell, ShellResult } from "../sandbox/pty-shell.js";
import { BoxGoneError, describeError, EngineUnavailableError } from "../util/errors.js";
import { logger } from "../util/log.js";
import {
  copyIn,
  diffOut,
  diffStat,
  lastDiffStat,
  readyForkBox,
  startDiffWatch,
  type CopyInResult,
  type Prefilled,
} from "../workspace/box-workspace.js";
import type { ApplyMode, ApplyResult } from "../workspace/apply-diff.js";
import { openHostRepo, type HostRepo } from "../workspace/host-repo.js";
import { snapshotCommit } from "../workspace/snapshot-commit.js";
import { SnapshotReceiver } from "../workspace/snapshot-receiver.js";
import { applySessionDiff } from "./session-apply.js";
import { createSessionBox, gatewayDirFor, startSessionShell } from "./session-box.js";
import type { SessionRecord } from "./session-record.js";
import { startSessionEgress } from "./session-egress.js";
import { SessionShell, type SessionShellSetup } from "./session-shell.js";
import { DEFAULT_WATCHDOG_GRACE_MS } from "./shell-watchdog.js";
import { newSessionId } from "./session-id.js";
import { disposeWarmBox, type WarmBox } from "./warm-box.js";
import { endDeadShells } from "./dead-shells.js";
import {
  CheckpointBook,
  DEFAULT_CHECKPOINT_MAX_BYTES,
  DEFAULT_MAX_CHECKPOINTS,
  checkpointBookPath,
  newCheckpointSlot,
  type CheckpointEntry,
  type CheckpointListing,
} from "./checkpoint-book.js";
import { parseShellState, restoreShellState, shellStateFile, writeShellStateInBox } from "./shell-state.js";
import { dropCheckpoint, restoreCheckpoint, saveCheckpoint } from "../workspace/box-checkpoint.js";
import { takeFork, type ForkSeed } from "./session-fork.js";

export { newSessionId } from "./session-id.js";
export type { ForkSeed } from "./session-fork.js";

const log = logger("session");

export const DEFAULT_COMMAND_TIMEOUT_MS = 120_000;
/**
 * How much of each stream a command keeps unless it asks for more: about 7,500 tokens of a model's
 * context, the head and the tail, with a marker between saying how to see the rest.
 */
export const DEFAULT_MAX_OUTPUT_BYTES = 30_000;
/**
 * The most one command may ask to keep of each stream (the bash tool's max_output_bytes), unless
 * the operator sets another (drydock serve --max-output-bytes): the host holds it a few times while
 * it answers (each stream, both merged, the reply's text and object), so this bounds what one call
 * costs the host.
 */
export const DEFAULT_MAX_OUTPUT_BYTES_LIMIT = 4 * 1024 * 1024;
/** The shell's own default (pty-shell.ts): how long SIGINT is given before SIGKILL. */
const DEFAULT_INTERRUPT_GRACE_MS = 1_000;

export interface SessionOptions extends Omit<BoxOptions, "image" | "labels" | "env"> {
  /** Host path of the repository to copy in. */
  repo: string;
  /** A commit-ish to start from instead of the working tree as it is now. */
  ref?: string;
  image: string;
  commandTimeoutMs?: number;
  maxOutputBytes?: number;
  /** The most a single command may ask for (default DEFAULT_MAX_OUTPUT_BYTES_LIMIT). */
  maxOutputBytesLimit?: number;
  labels?: Record<string, string>;
  env?: Record<string, string>;
  /** With `egress`: the host CA bundle the box trusts (default: SSL_CERT_FILE, else the system's). */
  egressCaFile?: string;
  /**
   * With `egress`: private and local ranges the operator opened (`--egress-allow-private`);
   * otherwise a name leading to one of them, or to the host, is refused.
   */
  egressAllowPrivate?: readonly AddressRange[];
  /** How long a stopped command's processes get after SIGINT before SIGKILL (default 1,000 ms). */
  interruptGraceMs?: number;
  /**
   * How long past a command's limit (plus interruptGraceMs) a shell that does not answer is given
   * before the call answers anyway and the shell is replaced (default 5,000 ms).
   */
  watchdogGraceMs?: number;
  /** Checkpoints the session may hold at once (default 20). */
  maxCheckpoints?: number;
  /** Bytes one checkpoint may hold: changed files, git index and refs (default 256 MiB). */
  checkpointMaxBytes?: number;
  /** Set for a fork: the state the new session starts from (session-fork.ts). */
  fork?: ForkSeed;
  /**
   * Copy untracked dependency trees (`node_modules`, a virtualenv) into the box too; default
   * false: they are left out and the start says so (workspace/dependency-trees.ts).
   */
  includeUntrackedDependencies?: boolean;
}

/** What a checkpoint restore did. */
export interface RestoreResult {
  name: string;
  /** Paths of the workspace written or removed. */
  changed_files: number;
  /** The shell's working directory after it; absent when the checkpoint has no shell state. */
  cwd?: string;
}

export interface SessionInfo {
  session_id: string;
  repo: string;
  base_commit: string;
  image: string;
  box: string;
  created_at: string;
  limits: BoxLimits & { command_timeout_s: number; max_output_bytes: number };
  /** The hosts the box may reach over HTTPS (none by default) and its connections so far. */
  egress: EgressReport;
}

export class Session {
  readonly createdAt: Date;
  /** When a kept session's box is no longer kept after its server died (epoch ms); undefined: not kept. */
  keptUntil: number | undefined;
  /** Set by task_done: the agent said its work is finished. */
  done: { at: Date; summary?: string } | undefined;
  /** The session's egress proxy, when its box may reach hosts. */
  private egress: EgressProxy | undefined;
  /** The shell, watched: every call answers by its limit plus a grace (session-shell.ts). */
  private readonly shells: SessionShell;
  private constructor(
    readonly id: string,
    readonly box: Box,
    shell: PtyShell,
    readonly repo: HostRepo,
    readonly baseCommit: string,
    readonly dirty: boolean,
    /** The host commit the diff applies to: HEAD, the ref, or a commit of the dirty snapshot. */
    readonly hostBaseCommit: string,
    readonly commandTimeoutMs: number,
    readonly maxOutputBytes: number,
    /**
     * The session's private host directory for its gateway's and egress proxy's sockets (no box
     * sees it; session-box.ts). It holds nothing else; it is removed with the session.
     */
    readonly gatewayDir: string,
    /** True when the box came from the warm pool. */
    readonly warm: boolean,
    /** Starts a new shell like the first; the watchdog's grace. */
    shellSetup: SessionShellSetup,
    createdAt = new Date(),
    /** What a fork of this session is made with: its repository, image, limits and egress. */
    readonly forkOptions?: SessionOptions,
  ) {
    this.createdAt = createdAt;
    this.shells = new SessionShell(shell, shellSetup, id);
    this.checkpoints = new CheckpointBook(
      {
        maxCheckpoints: forkOptions?.maxCheckpoints ?? DEFAULT_MAX_CHECKPOINTS,
        maxBytes: forkOptions?.checkpointMaxBytes ?? DEFAULT_CHECKPOINT_MAX_BYTES,
      },
      checkpointBookPath(id),
    );
  }

  /** The most a single command may ask to keep of each stream (bash's max_output_bytes). */
  outputLimitBytes = DEFAULT_MAX_OUTPUT_BYTES_LIMIT;
  /** The session's checkpoints, as the host knows them (their data is in the box). */
  readonly checkpoints: CheckpointBook;
  /**
   * For a fork: whether the box channel's program imported its checkpoint, or the script did
   * (box-agent/drydock_box/fork.py); said in the log and looked at by tests.
   */
  forkImportedByChannel?: boolean;

  /** The session's current shell (a new one after a shell stopped answering). */
  get shell(): PtyShell {
    return this.shells.current;
  }

  /** Starts a box, copies the repository in and starts the shell; removes the box on failure. */
  static async create(engine: BoxEngine, options: SessionOptions, id = newSessionId()): Promise<Session> {
    const started = Date.now();
    const { box, gatewayDir } = await createSessionBox(engine, id, options);
    try {
      // The file tools' channel starts beside the copy-in, so a session's first file operation
      // waits for no program to start (it resolves false, never throws, where it cannot run).
      const [copied, shell] = await Promise.all([
        copyInOrFork(box, options, SnapshotReceiver.open(box)),
        startSessionShell(box, options.env, { interruptGraceMs: options.interruptGraceMs }),
        openBoxChannel(box),
      ]);
      return await Session.ready(id, box, shell, gatewayDir, copied, options, started, false);
    } catch (error) {
      await box.remove().catch(() => undefined);
      await rm(gatewayDir, { recursive: true, force: true });
      throw error;
    }
  }

  /**
   * A session on a box from the warm pool (its shell is live, its receiver waiting): only the
   * repository is copied in. The box is removed on failure.
   */
  static async fromWarm(options: SessionOptions, warm: WarmBox): Promise<Session> {
    const started = Date.now();
    try {
      const copied = await copyInOrFork(warm.box, options, warm.receiver, warm.prefilled);
      return await Session.ready(
        warm.sessionId,
        warm.box,
        warm.shell,
        warm.gatewayDir,
        copied,
        options,
        started,
        true,
      );
    } catch (error) {
      await disposeWarmBox(warm);
      throw error;
    }
  }

  /**
   * A session around a kept box whose server died (`serve --keep-sessions`): the box, its
   * workspace and its gateway directory are as they were; the host repository, the commits and
   * the limits come from the session record; a new shell starts as a new session's does, and the
   * egress proxy, when the session had one, listens again at the same socket. The box is left as
   * it is on failure (it stays kept).
   */
  static async adopt(
    engine: BoxEngine,
    id: string,
    containerId: string,
    record: SessionRecord,
    options: Partial<SessionOptions>,
  ): Promise<Session> {
    const started = Date.now();
    const repo = await openHostRepo(record.repo, "repo");
    const recorded = record.limits ?? {};
    const num = (key: string, fallback: number): number =>
      typeof recorded[key] === "number" ? recorded[key] : fallback;
    const limits: BoxLimits = {
      network: typeof recorded.network === "string" ? recorded.network : "none",
      memoryMB: num("memoryMB", DEFAULT_LIMITS.memoryMB),
      cpus: num("cpus", DEFAULT_LIMITS.cpus),
      pidsLimit: num("pidsLimit", DEFAULT_LIMITS.pidsLimit),
      workspaceMB: num("workspaceMB", DEFAULT_LIMITS.workspaceMB),
      tmpMB: num("tmpMB", DEFAULT_LIMITS.tmpMB),
    };
    const box = Box.adopt(engine, containerId, id, record.image ?? "", limits);
    // The box's bind mount holds this directory open; made again only if it went missing.
    const gatewayDir = gatewayDirFor(id);
    await mkdir(gatewayDir, { recursive: true, mode: 0o700 });
    const ended = await endDeadShells(box);
    if (ended > 0) log.info(`session ${id}: ended ${ended} shell(s) of the drydock that died`);
    const [shell] = await Promise.all([
      startSessionShell(box, options.env, { interruptGraceMs: options.interruptGraceMs }),
      openBoxChannel(box),
    ]);
    const baseCommit = record.base_commit ?? "";
    const session = new Session(
      id,
      box,
      shell,
      repo,
      baseCommit,
      record.host_base_commit !== undefined && record.host_base_commit !== baseCommit,
      record.host_base_commit ?? baseCommit,
      num("command_timeout_s", DEFAULT_COMMAND_TIMEOUT_MS / 1000) * 1000,
      num("max_output_bytes", DEFAULT_MAX_OUTPUT_BYTES),
      gatewayDir,
      record.warm === true,
      {
        start: () => startSessionShell(box, options.env, { interruptGraceMs: options.interruptGraceMs }),
        interruptGraceMs: options.interruptGraceMs ?? DEFAULT_INTERRUPT_GRACE_MS,
        graceMs: options.watchdogGraceMs ?? DEFAULT_WATCHDOG_GRACE_MS,
      },
      record.created_at ? new Date(record.created_at) : new Date(),
    );
    session.outputLimitBytes = outputLimit(options, session.maxOutputBytes);
    if (record.egress?.length) {
      try {
        const proxy = await startSessionEgress({
          sessionId: id,
          box,
          gatewayDir,
          allowlist: record.egress,
          caFile: options.egressCaFile,
          allowPrivate: options.egressAllowPrivate,
        });
        session.egress = proxy;
        session.cleanups.push(() => proxy.close());
      } catch (error) {
        await session.shells.dispose();
        throw error;
      }
    }
    log.info(`session ${id} adopted in ${Date.now() - started} ms (box ${box.shortId})`);
    return session;
  }

  private static async ready(
    id: string,
    box: Box,
    shell: PtyShell,
    gatewayDir: string,
    copied: CopyInResult,
    options: SessionOptions,
    started: number,
    warm: boolean,
  ): Promise<Session> {
    // The box's snapshot commit exists only in the box; record the same tree on the host (no
    // ref, working tree untouched) so a branch can sit on exactly what the box started from.
    const fork = options.fork;
    const hostBase = fork
      ? fork.hostBaseCommit
      : copied.dirty && !options.ref
        ? await (copied.hostSnapshot ??
            snapshotCommit(copied.repo.root, { leaveOut: copied.leftOut?.map((tree) => tree.dir) }))
        : copied.baseCommit;
    const session = new Session(
      id,
      box,
      shell,
      copied.repo,
      fork ? fork.baseCommit : copied.baseCommit,
      fork ? fork.dirty : copied.dirty,
      hostBase,
      options.commandTimeoutMs ?? DEFAULT_COMMAND_TIMEOUT_MS,
      options.maxOutputBytes ?? DEFAULT_MAX_OUTPUT_BYTES,
      gatewayDir,
      warm,
      {
        start: () => startSessionShell(box, options.env, { interruptGraceMs: options.interruptGraceMs }),
        interruptGraceMs: options.interruptGraceMs ?? DEFAULT_INTERRUPT_GRACE_MS,
        graceMs: options.watchdogGraceMs ?? DEFAULT_WATCHDOG_GRACE_MS,
      },
      new Date(),
      { ...options, fork: undefined },
    );
    session.outputLimitBytes = outputLimit(options, session.maxOutputBytes);
    if (fork) await takeFork(session, fork, copied.holds);
    if (options.egress?.length) {
      const proxy = await startSessionEgress({
        sessionId: id,
        box,
        gatewayDir,
        allowlist: options.egress,
        caFile: options.egressCaFile,
        allowPrivate: options.egressAllowPrivate,
      });
      session.egress = proxy;
      session.cleanups.push(() => proxy.close());
    }
    log.info(
      `session ${id} ready in ${Date.now() - started} ms (box ${box.shortId}${warm ? ", warm" : ""}, ${copied.stats.files} files from the host${copied.cacheHit ? ", tree from the cache" : ""})`,
    );
    // Once the caller has the session, in its turn with the session's other diffs: the watch then
    // runs before the first diff or checkpoint, which follow the change, not the repository.
    session
      .oneDiffAtATime(() => startDiffWatch(box))
      .catch((error: unknown) =>
        log.debug(`session ${id}: the watch of /workspace did not start: ${describeError(error)}`),
      );
    return session;
  }

  info(): SessionInfo {
    return {
      session_id: this.id,
      repo: this.repo.root,
      base_commit: this.baseCommit,
      image: this.box.image,
      box: this.box.shortId,
      created_at: this.createdAt.toISOString(),
      limits: {
        ...this.box.limits,
        command_timeout_s: this.commandTimeoutMs / 1000,
        max_output_bytes: this.maxOutputBytes,
      },
      egress: this.egress?.report() ?? noEgressReport(),
    };
  }

  /**
   * Runs a command in the persistent shell; onOutput gets each chunk of stdout and stderr as it
   * comes. Calls run one at a time; each answers by its limit plus the watchdog's grace, whatever
   * the shell does.
   */
  async bash(
    command: string,
    options: {
      timeoutMs?: number;
      /** How much of each stream to keep (default the session's); callers check it against outputLimitBytes. */
      maxOutputBytes?: number;
      signal?: AbortSignal;
      onOutput?: (text: string, stream: StreamName) => void;
    } = {},
  ): Promise<ShellResult> {
    try {
      return await this.shells.run(command, {
        timeoutMs: options.timeoutMs ?? this.commandTimeoutMs,
        maxOutputBytes: options.maxOutputBytes ?? this.maxOutputBytes,
        signal: options.signal,
        onOutput: options.onOutput,
      });
    } catch (error) {
      // A shell that cannot start again, in a box that is gone or behind an engine that does not
      // answer: say which, not what the terminal showed.
      // An engine that cannot even say whether the box runs (refused, or an error while it stops)
      // is, for the caller, an engine that does not answer.
      const running = await this.box.isRunning().catch((engineError: unknown) => {
        if (engineError instanceof EngineUnavailableError) throw engineError;
        throw new EngineUnavailableError((engineError as Error).message, { cause: engineError });
      });
      if (!running) throw new BoxGoneError(this.box.shortId, { cause: error });
      // The engine refused to start the new shell because the box had stopped, while (stopping
      // itself) it still lists the box as running: the box is gone all the same.
      if (/cannot exec in a stopped state/i.test((error as Error).message)) {
        throw new BoxGoneError(this.box.shortId, { cause: error });
      }
      throw error;
    }
  }

  /** Replaces the shell with a fresh one (cwd and environment reset), in turn with commands. */
  restartShell(signal?: AbortSignal): Promise<void> {
    return this.shells.restart(signal);
  }

  /** The diff as text, for people and models (bytes that are not UTF-8 show as U+FFFD). */
  async diff(signal?: AbortSignal): Promise<string> {
    return (await this.diffBytes(signal)).toString("utf8");
  }

  /** The diff as bytes, exactly as git wrote it: what apply uses. */
  diffBytes(signal?: AbortSignal): Promise<Buffer> {
    return this.oneDiffAtATime(() => diffOut(this.box, { signal }), signal);
  }

  diffStat(signal?: AbortSignal): Promise<string> {
    return this.oneDiffAtATime(() => diffStat(this.box, { signal }), signal);
  }

  /**
   * The diff and its stat, for session_diff and the library, in one turn: the stat runs only once
   * the diff is taken. A diff that fails (over its cap) leaves no stat behind to run on alone over
   * every file and hold up whatever waits its turn (the session's last diff as it ends).
   */
  async diffWithStat(signal?: AbortSignal): Promise<{ diff: string; stat: string }> {
    return this.oneDiffAtATime(async () => {
      const diff = (await diffOut(this.box, { signal })).toString("utf8");
      return { diff, stat: await lastDiffStat(this.box, { signal }) };
    }, signal);
  }

  private diffQueue: Promise<unknown> = Promise.resolve();

  /**
   * Diffs update the box's private index, and git locks it: two at once would fail one. Every
   * operation on the box's git (checkpoints, forks: session-fork.ts) goes through here. A call
   * whose signal is aborted while it waits its turn is dropped without running, and its caller is
   * answered at once rather than when the calls before it end.
   */
  oneDiffAtATime<T>(run: () => Promise<T>, signal?: AbortSignal): Promise<T> {
    const turn = () => (signal?.aborted ? Promise.reject(cancelled(signal)) : run());
    const next = this.diffQueue.then(turn, turn);
    this.diffQueue = next.catch(() => undefined);
    if (signal === undefined) return next;
    return new Promise<T>((resolve, reject) => {
      const onAbort = () => reject(cancelled(signal));
      if (signal.aborted) onAbort();
      else signal.addEventListener("abort", onAbort, { once: true });
      next.then(resolve, reject).finally(() => signal.removeEventListener("abort", onAbort));
    });
  }

  /**
   * Saves the workspace as checkpoint `name` (replacing one of that name): every file changed,
   * added or deleted since the base (ignored files only with includeIgnored), git's index, refs
   * and HEAD, and the shell's working directory and exported variables.
   */
  async checkpoint(
    name: string,
    options: { message?: string; includeIgnored?: boolean; signal?: AbortSignal } = {},
  ): Promise<CheckpointListing> {
    this.checkpoints.admit(name);
    const entry = await this.saveState(name, options);
    // Two saves of new names at once: the count is checked again before either is kept.
    let replaced: CheckpointEntry | undefined;
    try {
      replaced = this.checkpoints.admit(name);
    } catch (error) {
      await dropCheckpoint(this.box, entry.slot).catch(() => undefined);
      throw error;
    }
    this.checkpoints.set(entry);
    // The one replaced goes after the reply: nothing waits for it.
    if (replaced)
      void this.oneDiffAtATime(() => dropCheckpoint(this.box, replaced.slot)).catch(() => undefined);
    return this.checkpoints.list().find((c) => c.name === name)!;
  }

  /** Saves the workspace and the shell as a checkpoint entry, not yet in the book. */
  async saveState(
    name: string,
    options: { message?: string; includeIgnored?: boolean; signal?: AbortSignal },
  ): Promise<CheckpointEntry> {
    const includeIgnored = options.includeIgnored ?? false;
    // The shell answers once any command it runs has ended: files are read after that. It writes
    // its state in the box; the save's script hands it over with the rest.
    await writeShellStateInBox((command) =>
      this.bash(command, { timeoutMs: 30_000, signal: options.signal }),
    );
    const slot = newCheckpointSlot();
    const saved = await this.oneDiffAtATime(() =>
      saveCheckpoint(this.box, slot, {
        name,
        includeIgnored,
        maxBytes: this.checkpoints.limits.maxBytes,
        shellState: true,
        signal: options.signal,
      }),
    );
    let shell;
    try {
      shell = parseShellState(saved.shellState ?? Buffer.alloc(0));
    } catch (error) {
      await this.oneDiffAtATime(() => dropCheckpoint(this.box, slot)).catch(() => undefined);
      throw error;
    }
    return {
      name,
      ...(options.message === undefined ? {} : { message: options.message }),
      slot,
      commit: saved.commit,
      bytes: saved.bytes,
      files: saved.files,
      includeIgnored,
      createdAt: new Date(),
      shell,
    };
  }

  /** Returns the workspace, git's state and the shell to checkpoint `name`. */
  async restore(name: string, signal?: AbortSignal): Promise<RestoreResult> {
    const entry = this.checkpoints.get(name);
    const shell = entry.shell;
    const { files } = await this.oneDiffAtATime(() =>
      restoreCheckpoint(this.box, entry.slot, {
        name,
        commit: entry.commit,
        includeIgnored: entry.includeIgnored,
        ...(shell === undefined ? {} : { shellState: shellStateFile(shell) }),
        signal,
      }),
    );
    if (shell === undefined) return { name, changed_files: files };
    const cwd = await restoreShellState((command) => this.bash(command, { timeoutMs: 30_000, signal }));
    return { name, changed_files: files, cwd };
  }

  markDone(summary?: string): void {
    this.done = { at: new Date(), summary };
  }

  /** Applies the session's diff to the host repository: a new branch (default) or the working tree. */
  async apply(
    options: {
      mode?: ApplyMode;
      branch?: string;
      replaceBranch?: boolean;
      includeUncommitted?: boolean;
      allowIgnoreChanges?: boolean;
      signal?: AbortSignal;
    } = {},
  ): Promise<ApplyResult> {
    const diff = await this.diffBytes(options.signal);
    return applySessionDiff(
      { id: this.id, repo: this.repo.root, hostBaseCommit: this.hostBaseCommit },
      diff,
      options,
    );
  }

  /** Runs before the box is removed (the aider tool closes the session's gateway here). */
  readonly cleanups: Array<() => Promise<void>> = [];

  async destroy(): Promise<void> {
    await Promise.allSettled(this.cleanups.splice(0).map((c) => c()));
    await this.shells.dispose();
    await this.box.remove();
    await rm(this.gatewayDir, { recursive: true, force: true });
    log.info(`session ${this.id} removed`);
  }

  /** Lets go of the session without removing its box (a kept box stays for a later server). */
  async detach(): Promise<void> {
    await Promise.allSettled(this.cleanups.splice(0).map((c) => c()));
    await this.shells.dispose();
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.destroy();
  }
}

/**
 * The repository into a new session's box: a snapshot, or for a fork only what the source's
 * checkpoint will not bring (session-fork.ts).
 */
async function copyInOrFork(
  box: Box,
  options: SessionOptions,
  receiver: SnapshotReceiver,
  prefilled?: Prefilled,
): Promise<CopyInResult> {
  const fork = options.fork;
  if (fork === undefined) {
    return copyIn(box, options.repo, {
      ref: options.ref,
      receiver,
      prefilled,
      includeUntrackedDependencies: options.includeUntrackedDependencies,
    });
  }
  const ready = await readyForkBox(box, fork.repo ?? options.repo, receiver, prefilled);
  // What the box holds is known: the source's box makes the pack while this one's shell starts.
  if (ready.holds !== undefined) void fork.exportFor(ready.holds).catch(() => undefined);
  return { ...ready, baseCommit: fork.baseCommit, dirty: fork.dirty };
}

/** What a call given up while it waited rejects with: the box's own "cancelled", as exec gives. */
function cancelled(signal: AbortSignal): Error {
  return signal.reason instanceof Error &&
    signal.reason.name !== "AbortError" &&
    signal.reason.name !== "TimeoutError"
    ? signal.reason
    : new Error("cancelled");
}

/** The server's limit on one command's output, never below the session's own default. */
function outputLimit(options: Partial<SessionOptions>, sessionDefault: number): number {
  return Math.max(options.maxOutputBytesLimit ?? DEFAULT_MAX_OUTPUT_BYTES_LIMIT, sessionDefault);
}
