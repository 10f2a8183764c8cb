/** A sandbox in this process: a Session of a SessionManager, used directly (no MCP hop). */
import { InvalidArgumentError } from "../util/errors.js";
import type { CheckpointListing } from "../session/checkpoint-book.js";
import type { Session } from "../session/session.js";
import { forkSession } from "../session/session-fork.js";
import type { SessionManager } from "../session/session-manager.js";
import { ProgressLines } from "../tools/progress-lines.js";
import { listDir, readFile } from "../tools/box-files.js";
import { runEdit } from "../tools/file-editor.js";
import { fileText, MAX_READ_BYTES } from "./file-text.js";
import type {
  AppliedChanges,
  ApplyRequest,
  BackendRunOptions,
  CheckpointInfo,
  CheckpointOptions,
  CommandResult,
  RestoredCheckpoint,
  FileEntry,
  SandboxBackend,
  SandboxDiff,
  SandboxInfo,
} from "./sandbox-backend.js";

/** Streamed lines are cut here (remote ones at the server's 500 characters). */
const MAX_LINE_CHARS = 64 * 1024;

export class LocalBackend implements SandboxBackend {
  readonly info: SandboxInfo;

  constructor(
    private readonly manager: SessionManager,
    private readonly session: Session,
  ) {
    this.info = {
      id: session.id,
      repo: session.repo.root,
      baseCommit: session.baseCommit,
      image: session.box.image,
      box: session.box.shortId,
      commandTimeoutMs: session.commandTimeoutMs,
      maxOutputBytes: session.maxOutputBytes,
    };
  }

  async run(command: string, options: BackendRunOptions): Promise<CommandResult> {
    // Whole, cleaned lines per stream, as the bash tool reports them over MCP.
    const lines = { stdout: new ProgressLines(MAX_LINE_CHARS), stderr: new ProgressLines(MAX_LINE_CHARS) };
    if (options.maxOutputBytes !== undefined && options.maxOutputBytes > this.session.outputLimitBytes) {
      throw new InvalidArgumentError(
        "maxOutputBytes",
        `${options.maxOutputBytes} is over the limit of ${this.session.outputLimitBytes} bytes per stream; ask for at most that, or write the output to a file and read it with files.read`,
      );
    }
    const result = await this.session.bash(command, {
      timeoutMs: options.timeoutMs,
      maxOutputBytes: options.maxOutputBytes,
      signal: options.signal,
      onOutput: (text, stream) => {
        for (const line of lines[stream].push(text)) options.onLine(line, stream);
      },
    });
    for (const stream of ["stdout", "stderr"] as const) {
      for (const line of lines[stream].flush()) options.onLine(line, stream);
    }
    return {
      exitCode: result.exitCode,
      stdout: result.stdout,
      stderr: result.stderr,
      output: result.output,
      timedOut: result.timedOut,
      truncated: result.truncated,
      restarted: result.restarted,
      ...(result.note === undefined ? {} : { note: result.note }),
    };
  }

  async readText(path: string, signal?: AbortSignal): Promise<string> {
    return fileText(await readFile(this.session.box, path, { maxBytes: MAX_READ_BYTES, signal }));
  }

  async writeText(path: string, text: string, signal?: AbortSignal): Promise<void> {
    // The file editor's create, as file_editor runs it remotely: the same checks and errors.
    await runEdit(this.session, { operation: "create", path, content: text, overwrite: true }, signal);
  }

  async list(path: string, depth: number, signal?: AbortSignal): Promise<FileEntry[]> {
    return (await listDir(this.session.box, path, depth, { signal })).entries;
  }

  async diff(signal?: AbortSignal): Promise<SandboxDiff> {
    const { diff, stat } = await this.session.diffWithStat(signal);
    return { diff, stat, baseCommit: this.session.baseCommit };
  }

  async apply(request: ApplyRequest): Promise<AppliedChanges> {
    const result = await this.session.apply(request);
    return {
      mode: result.mode,
      ...(result.branch === undefined ? {} : { branch: result.branch }),
      ...(result.commit === undefined ? {} : { commit: result.commit }),
      files: result.files.map((f) => ({ ...f })),
      stat: { ...result.stat },
      ...(result.warnings === undefined ? {} : { warnings: [...result.warnings] }),
    };
  }

  async checkpoint(name: string, options: CheckpointOptions): Promise<CheckpointInfo> {
    return checkpointInfo(await this.session.checkpoint(name, options));
  }

  async restore(name: string, signal?: AbortSignal): Promise<RestoredCheckpoint> {
    const restored = await this.session.restore(name, signal);
    return {
      name: restored.name,
      changedFiles: restored.changed_files,
      ...(restored.cwd === undefined ? {} : { cwd: restored.cwd }),
    };
  }

  async checkpoints(): Promise<CheckpointInfo[]> {
    return this.session.checkpoints.list().map(checkpointInfo);
  }

  async fork(n: number, checkpoint?: string, signal?: AbortSignal): Promise<SandboxBackend[]> {
    const sessions = await forkSession(
      this.session,
      { n, checkpoint, signal },
      (options) => this.manager.create(options),
      (session) => this.manager.destroy(session.id),
    );
    return sessions.map((session) => new LocalBackend(this.manager, session));
  }

  async close(): Promise<void> {
    if (this.manager.has(this.session.id)) await this.manager.destroy(this.session.id);
  }
}

/** A checkpoint as the tools list it, in the library's names. */
export function checkpointInfo(c: CheckpointListing): CheckpointInfo {
  return {
    name: c.name,
    ...(c.message === undefined ? {} : { message: c.message }),
    createdAt: c.created_at,
    ageS: c.age_s,
    bytes: c.bytes,
    changedFiles: c.changed_files,
    includeIgnored: c.include_ignored,
    ...(c.cwd === undefined ? {} : { cwd: c.cwd }),
  };
}
