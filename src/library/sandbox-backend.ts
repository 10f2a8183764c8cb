/**
 * What a sandbox needs from the drydock it runs on, in-process or behind `serve --http`, and the
 * values it hands back. Each flavour implements SandboxBackend; Sandbox checks input and wraps it.
 */

/** Which stream a streamed line came on; "output" when the server's progress cannot say (remote). */
export type OutputStream = "stdout" | "stderr" | "output";

/** A finished command, as the bash tool reports it. */
export interface CommandResult {
  /** The exit status; null when the command was stopped (timed out or cancelled). */
  exitCode: number | null;
  stdout: string;
  stderr: string;
  /**
   * stdout and stderr merged: in arrival order in-process; behind `serve --http`, stdout then
   * stderr (the reply carries each stream once, apart).
   */
  output: string;
  timedOut: boolean;
  /** Output past the session's cap was cut (head and tail kept). */
  truncated: boolean;
  /** A new shell was started during the call; `note` says what state it has. */
  restarted: boolean;
  note?: string;
}

/** One entry of a directory listing: its path relative to the listed directory, and its type. */
export interface FileEntry {
  path: string;
  type: "file" | "directory" | "symlink" | "other";
}

/** Everything changed in the box since the session started. */
export interface SandboxDiff {
  /** The unified diff (binary-safe; empty when nothing changed). */
  diff: string;
  /** git's diffstat of it. */
  stat: string;
  /** The commit in the box the diff is taken against. */
  baseCommit: string;
}

/**
 * Where `apply` puts the changes: a new branch (the default), or the working tree, which refuses a
 * diff that removes or weakens ignore rules unless `allowIgnoreChanges`.
 */
export type ApplyTarget =
  | { branch?: string; replaceBranch?: boolean; includeUncommitted?: boolean }
  | { worktree: true; allowIgnoreChanges?: boolean };

/** What the backend is asked to apply. */
export interface ApplyRequest {
  mode: "branch" | "worktree";
  branch?: string;
  replaceBranch?: boolean;
  includeUncommitted?: boolean;
  allowIgnoreChanges?: boolean;
}

export interface AppliedChanges {
  mode: "branch" | "worktree";
  /** Branch mode: the branch made and its commit. */
  branch?: string;
  commit?: string;
  files: Array<{ path: string; status: string; oldPath?: string }>;
  stat: { filesChanged: number; insertions: number; deletions: number };
  /** What to look at before trusting the result (ignore rules removed or weakened); absent when nothing. */
  warnings?: string[];
}

/** What a sandbox is: the session_create reply, in the library's names. */
export interface SandboxInfo {
  /** The session id (the box's `drydock.session` label). */
  id: string;
  /** The host repository copied in. */
  repo: string;
  baseCommit: string;
  image: string;
  /** The box's short container id. */
  box: string;
  /** Default per-command limit and output cap. */
  commandTimeoutMs: number;
  maxOutputBytes: number;
  /**
   * Remote only: the session's secret (session_create's session_secret), which with the id lets a
   * new MCP connection continue the session (session_resume) on a server that keeps sessions.
   * Given to this creator only; keep it like a password.
   */
  sessionSecret?: string;
}

/** A saved checkpoint of a sandbox, as `checkpoint` and `checkpoints` report it. */
export interface CheckpointInfo {
  name: string;
  message?: string;
  createdAt: string;
  ageS: number;
  /** Changed files (as saved), git index and refs, in bytes. */
  bytes: number;
  /** Paths that differ from the sandbox's start. */
  changedFiles: number;
  includeIgnored: boolean;
  /** The shell's working directory when it was saved (absent: saved without the shell). */
  cwd?: string;
}

export interface CheckpointOptions {
  message?: string;
  /** Also save files .gitignore ignores (default false). */
  includeIgnored?: boolean;
  signal?: AbortSignal;
}

/** What a restore did: paths written or removed, and where the shell is after it. */
export interface RestoredCheckpoint {
  name: string;
  changedFiles: number;
  cwd?: string;
}

export interface BackendRunOptions {
  timeoutMs?: number;
  maxOutputBytes?: number;
  signal?: AbortSignal;
  onLine: (line: string, stream: OutputStream) => void;
}

export interface SandboxBackend {
  readonly info: SandboxInfo;
  run(command: string, options: BackendRunOptions): Promise<CommandResult>;
  readText(path: string, signal?: AbortSignal): Promise<string>;
  writeText(path: string, text: string, signal?: AbortSignal): Promise<void>;
  list(path: string, depth: number, signal?: AbortSignal): Promise<FileEntry[]>;
  diff(signal?: AbortSignal): Promise<SandboxDiff>;
  apply(request: ApplyRequest): Promise<AppliedChanges>;
  checkpoint(name: string, options: CheckpointOptions): Promise<CheckpointInfo>;
  restore(name: string, signal?: AbortSignal): Promise<RestoredCheckpoint>;
  checkpoints(signal?: AbortSignal): Promise<CheckpointInfo[]>;
  /** `n` new sessions from this one's state now or its checkpoint; all or none. */
  fork(n: number, checkpoint?: string, signal?: AbortSignal): Promise<SandboxBackend[]>;
  /** Removes the box. */
  close(): Promise<void>;
}
