/**
 * A sandbox for an orchestrator: one drydock session (a hardened box holding a copy of a
 * repository), with the shape E2B users know: `commands.run`, `files.read` / `write` / `list`, plus
 * `diff` and `apply` to bring the changes home. The same class serves both flavours; what runs
 * behind it (in-process or `serve --http`) is its backend.
 */
import { InvalidArgumentError, SessionNotFoundError } from "../util/errors.js";
import type {
  AppliedChanges,
  ApplyTarget,
  CheckpointInfo,
  CheckpointOptions,
  CommandResult,
  RestoredCheckpoint,
  FileEntry,
  OutputStream,
  SandboxBackend,
  SandboxDiff,
  SandboxInfo,
} from "./sandbox-backend.js";

/** Longest time limit a command may have: one day, as the bash tool allows. */
const MAX_TIMEOUT_MS = 86_400_000;
const MAX_LIST_DEPTH = 20;

export interface RunOptions {
  /** Time limit in ms (default: the session's, 120,000); remotely rounded up to whole seconds. */
  timeoutMs?: number;
  /**
   * How much of each stream to keep, head and tail (default: the session's, 30,000 bytes; at most
   * the server's limit, 4 MiB unless drydock serve --max-output-bytes says otherwise).
   */
  maxOutputBytes?: number;
  /** Gives up on the command: it is stopped as a whole, and run rejects with the signal's reason. */
  signal?: AbortSignal;
  /** Each complete line of stdout as it comes (in-process only; remote lines go to onOutput). */
  onStdout?: (line: string) => void;
  /** Each complete line of stderr as it comes (in-process only; remote lines go to onOutput). */
  onStderr?: (line: string) => void;
  /** Each complete line of either stream as it comes, both flavours, with the stream it came on. */
  onOutput?: (line: string, stream: OutputStream) => void;
}

export interface FileOptions {
  signal?: AbortSignal;
}

export interface ListOptions extends FileOptions {
  /** How many levels to list (default 1: the directory's own entries). Hidden entries are skipped. */
  depth?: number;
}

export class Sandbox implements AsyncDisposable {
  /** Commands in the session's persistent bash shell (cwd, variables and functions persist). */
  readonly commands = {
    /** Runs a command and resolves when it ends, whatever its exit code. */
    run: async (command: string, options: RunOptions = {}): Promise<CommandResult> =>
      this.run(command, options),
  };

  /** Text files under /workspace; paths are relative to it or absolute under it. */
  readonly files = {
    /** The whole file as text (UTF-8, or Latin-1); binary files and files over 8 MiB are refused. */
    read: async (path: string, options: FileOptions = {}): Promise<string> =>
      abortable(options.signal, this.open().readText(checkedPath(path), options.signal)),
    /** Writes the whole file, making missing parent directories; an existing file keeps its mode. */
    write: async (path: string, text: string, options: FileOptions = {}): Promise<void> => {
      if (typeof text !== "string") {
        throw new InvalidArgumentError("text", "must be a string: files.write writes text files");
      }
      return abortable(options.signal, this.open().writeText(checkedPath(path), text, options.signal));
    },
    /** The entries of a directory (default /workspace), `depth` levels deep. */
    list: async (path = "/workspace", options: ListOptions = {}): Promise<FileEntry[]> => {
      const depth = options.depth ?? 1;
      if (!Number.isInteger(depth) || depth < 1 || depth > MAX_LIST_DEPTH) {
        throw new InvalidArgumentError("depth", `must be a whole number from 1 to ${MAX_LIST_DEPTH}`);
      }
      return abortable(options.signal, this.open().list(checkedPath(path), depth, options.signal));
    },
  };

  private closing: Promise<void> | undefined;

  /** @internal Made by Drydock.create. */
  constructor(
    private readonly backend: SandboxBackend,
    private readonly onClosed: () => void = () => undefined,
    /** Makes a Sandbox of a fork's backend, owned (and closed) like this one. */
    private readonly adopt: (backend: SandboxBackend) => Sandbox = (backend) => new Sandbox(backend),
  ) {}

  /** The session id; the box carries it as its `drydock.session` label. */
  get id(): string {
    return this.backend.info.id;
  }

  get info(): SandboxInfo {
    return { ...this.backend.info };
  }

  /** Everything changed in the box since it started, committed in the box or not. */
  async diff(options: FileOptions = {}): Promise<SandboxDiff> {
    return abortable(options.signal, this.open().diff(options.signal));
  }

  /**
   * Brings the diff to the host repository: a commit on a new branch (default drydock/<id>; the
   * working tree, index and HEAD untouched; on the user's last commit, without the uncommitted work
   * the session started from unless `includeUncommitted`), or `{ worktree: true }` to change the working tree
   * (refusing a diff that removes or weakens ignore rules unless `allowIgnoreChanges`). A diff
   * that does not apply cleanly changes nothing and throws ApplyConflictError.
   */
  async apply(target: ApplyTarget = {}): Promise<AppliedChanges> {
    const backend = this.open();
    if ("worktree" in target) {
      if (target.worktree !== true) {
        throw new InvalidArgumentError("worktree", "must be true; leave it out to apply as a branch");
      }
      const extra = ["branch", "replaceBranch", "includeUncommitted"].find((k) => k in target);
      if (extra !== undefined) {
        throw new InvalidArgumentError(extra, "applies to a branch only; leave it out with worktree: true");
      }
      return backend.apply({ mode: "worktree", allowIgnoreChanges: target.allowIgnoreChanges });
    }
    if ("allowIgnoreChanges" in target) {
      throw new InvalidArgumentError(
        "allowIgnoreChanges",
        "applies to { worktree: true } only; a branch takes ignore-rule changes with a warning",
      );
    }
    if (target.branch !== undefined && (typeof target.branch !== "string" || target.branch.trim() === "")) {
      throw new InvalidArgumentError("branch", "must be a branch name such as drydock/fix-typo");
    }
    return backend.apply({
      mode: "branch",
      branch: target.branch,
      replaceBranch: target.replaceBranch,
      includeUncommitted: target.includeUncommitted,
    });
  }

  /**
   * Saves the sandbox's state as checkpoint `name` (replacing one of that name): changed files
   * (ignored ones only with includeIgnored), git's index, refs and HEAD, the shell's working
   * directory and exported variables.
   */
  async checkpoint(name: string, options: CheckpointOptions = {}): Promise<CheckpointInfo> {
    if (typeof name !== "string") throw new InvalidArgumentError("name", "must be a checkpoint name");
    return abortable(options.signal, this.open().checkpoint(name, options));
  }

  /** Returns the sandbox exactly to checkpoint `name`: files, git's state, the shell's cwd and exports. */
  async restore(name: string, options: FileOptions = {}): Promise<RestoredCheckpoint> {
    if (typeof name !== "string") throw new InvalidArgumentError("name", "must be a checkpoint name");
    return abortable(options.signal, this.open().restore(name, options.signal));
  }

  /** The sandbox's checkpoints, oldest first. */
  async checkpoints(options: FileOptions = {}): Promise<CheckpointInfo[]> {
    return abortable(options.signal, this.open().checkpoints(options.signal));
  }

  /**
   * `n` new sandboxes (default 1), each in a box of its own, starting from this one's state now or
   * from its checkpoint `checkpoint`; running processes are not copied. All or none.
   */
  async fork(n = 1, options: { checkpoint?: string; signal?: AbortSignal } = {}): Promise<Sandbox[]> {
    if (!Number.isInteger(n) || n < 1) throw new InvalidArgumentError("n", "must be a whole number from 1");
    const backends = await abortable(options.signal, this.open().fork(n, options.checkpoint, options.signal));
    return backends.map((backend) => this.adopt(backend));
  }

  /** Removes the box and everything in it; changes not applied are lost. Closing twice is fine. */
  close(): Promise<void> {
    this.closing ??= this.backend.close().finally(() => this.onClosed());
    return this.closing;
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }

  private open(): SandboxBackend {
    if (this.closing !== undefined) throw new SessionNotFoundError(this.id);
    return this.backend;
  }

  private async run(command: string, options: RunOptions): Promise<CommandResult> {
    const backend = this.open();
    if (typeof command !== "string") throw new InvalidArgumentError("command", "must be a string");
    const { timeoutMs } = options;
    if (
      timeoutMs !== undefined &&
      (!Number.isInteger(timeoutMs) || timeoutMs < 1 || timeoutMs > MAX_TIMEOUT_MS)
    ) {
      throw new InvalidArgumentError(
        "timeoutMs",
        `must be a whole number of milliseconds from 1 to ${MAX_TIMEOUT_MS} (one day)`,
      );
    }
    const { maxOutputBytes } = options;
    if (maxOutputBytes !== undefined && (!Number.isInteger(maxOutputBytes) || maxOutputBytes < 1_000)) {
      throw new InvalidArgumentError("maxOutputBytes", "must be a whole number of bytes, at least 1000");
    }
    // A callback that throws must not break the shell's stream; its first error is thrown once
    // the command has ended.
    let callbackError: { error: unknown } | undefined;
    const onLine = (line: string, stream: OutputStream) => {
      try {
        if (stream === "stdout") options.onStdout?.(line);
        if (stream === "stderr") options.onStderr?.(line);
        options.onOutput?.(line, stream);
      } catch (error) {
        callbackError ??= { error };
      }
    };
    const result = await abortable(
      options.signal,
      backend.run(command, { timeoutMs, maxOutputBytes, signal: options.signal, onLine }),
    );
    if (callbackError !== undefined) throw callbackError.error;
    return result;
  }
}

/**
 * A call given up through its signal rejects with the signal's reason in both flavours: remotely
 * the server's reply never comes; in-process the stopped command's result is not handed out.
 */
async function abortable<T>(signal: AbortSignal | undefined, call: Promise<T>): Promise<T> {
  let value: T;
  try {
    value = await call;
  } catch (error) {
    if (signal?.aborted) throw signal.reason;
    throw error;
  }
  if (signal?.aborted) throw signal.reason;
  return value;
}

function checkedPath(path: unknown): string {
  if (typeof path !== "string" || path.trim() === "") {
    throw new InvalidArgumentError("path", "must be a non-empty path under /workspace");
  }
  return path;
}
