/** A sandbox behind `drydock serve --http`: each operation is one of the server's tools over MCP. */
import { LIST_SCRIPT } from "../tools/box-file-scripts.js";
import { refusal } from "../tools/box-files.js";
import { parseFindListing } from "../tools/edit/directory-listing.js";
import { resolveWorkspacePath } from "../sandbox/workspace-path.js";
import { fileText, MAX_READ_BYTES } from "./file-text.js";
import type { RemoteClient } from "./remote-client.js";
import { READ_RANGE_SCRIPT, runRemoteScript, type ScriptRun } from "./remote-box-script.js";
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

/** How long past a command's own limit the server may take to answer (stop, restart, reply). */
const REPLY_GRACE_MS = 60_000;
/** Calls that run no command of the caller's: diffs, applies, removal. */
const TOOL_TIMEOUT_MS = 300_000;

export class RemoteBackend implements SandboxBackend {
  constructor(
    private readonly client: RemoteClient,
    readonly info: SandboxInfo,
  ) {}

  async run(command: string, options: BackendRunOptions): Promise<CommandResult> {
    const timeoutS = options.timeoutMs === undefined ? undefined : Math.ceil(options.timeoutMs / 1000);
    const limitMs = timeoutS === undefined ? this.info.commandTimeoutMs : timeoutS * 1000;
    // The server's progress notifications carry whole lines of both streams, not which stream.
    const reply = await this.client.call(
      "bash",
      {
        command,
        session_id: this.info.id,
        ...(timeoutS === undefined ? {} : { timeout_s: timeoutS }),
        ...(options.maxOutputBytes === undefined ? {} : { max_output_bytes: options.maxOutputBytes }),
      },
      {
        timeoutMs: limitMs + REPLY_GRACE_MS,
        signal: options.signal,
        onProgress: (progress) => {
          if (typeof progress.message === "string") options.onLine(progress.message, "output");
        },
      },
    );
    return {
      exitCode: typeof reply.exit_code === "number" ? reply.exit_code : null,
      stdout: String(reply.stdout ?? ""),
      stderr: String(reply.stderr ?? ""),
      // The reply carries each stream once, apart; their arrival order is in the text a model
      // reads, which this client does not ask for (reply-meta.ts).
      output: String(reply.stdout ?? "") + String(reply.stderr ?? ""),
      timedOut: reply.timed_out === true,
      truncated: reply.truncated === true,
      restarted: reply.restarted === true,
      ...(typeof reply.note === "string" ? { note: reply.note } : {}),
    };
  }

  async readText(path: string, signal?: AbortSignal): Promise<string> {
    const absolute = resolveWorkspacePath(path, "path");
    // Each reply must fit the session's output cap once base64-encoded.
    const chunk = Math.max(
      3,
      Math.min(4 * 1024 * 1024, Math.floor((this.info.maxOutputBytes - 1024) / 4) * 3),
    );
    const parts: Buffer[] = [];
    let read = 0;
    let real = absolute;
    let size = 0;
    do {
      const count = Math.min(chunk, MAX_READ_BYTES - read);
      const run = await this.script(READ_RANGE_SCRIPT, path, [absolute, String(read), String(count)], signal);
      const header = headerFields(run.stdout, 2);
      real = header.fields[0] ?? absolute;
      size = Number(header.fields[1]);
      const data = run.stdout.subarray(header.next);
      parts.push(data);
      read += data.length;
      // A file past the limit is refused whole: no use fetching the part that fits.
      if (data.length === 0 || size > MAX_READ_BYTES) break;
    } while (read < Math.min(size, MAX_READ_BYTES));
    const data = Buffer.concat(parts);
    return fileText({ path: real, size, data, truncated: size > data.length });
  }

  async writeText(path: string, text: string, signal?: AbortSignal): Promise<void> {
    await this.client.call(
      "file_editor",
      { operation: "create", path, content: text, overwrite: true, session_id: this.info.id },
      { timeoutMs: TOOL_TIMEOUT_MS, signal },
    );
  }

  async list(path: string, depth: number, signal?: AbortSignal): Promise<FileEntry[]> {
    const absolute = resolveWorkspacePath(path, "path");
    const run = await this.script(LIST_SCRIPT, path, [absolute, String(depth)], signal);
    const end = run.stdout.indexOf(0);
    return parseFindListing(run.stdout.subarray(end + 1).toString("utf8"));
  }

  async diff(signal?: AbortSignal): Promise<SandboxDiff> {
    const reply = await this.client.call(
      "session_diff",
      { session_id: this.info.id },
      { timeoutMs: TOOL_TIMEOUT_MS, signal },
    );
    return { diff: String(reply.diff), stat: String(reply.stat), baseCommit: String(reply.base_commit) };
  }

  async apply(target: ApplyRequest): Promise<AppliedChanges> {
    const reply = await this.client.call(
      "session_apply",
      {
        session_id: this.info.id,
        mode: target.mode,
        ...(target.branch === undefined ? {} : { branch: target.branch }),
        ...(target.replaceBranch === undefined ? {} : { replace_branch: target.replaceBranch }),
        ...(target.includeUncommitted === undefined
          ? {}
          : { include_uncommitted: target.includeUncommitted }),
        ...(target.allowIgnoreChanges === undefined
          ? {}
          : { allow_ignore_changes: target.allowIgnoreChanges }),
      },
      { timeoutMs: TOOL_TIMEOUT_MS },
    );
    return {
      mode: reply.mode as AppliedChanges["mode"],
      ...(typeof reply.branch === "string" ? { branch: reply.branch } : {}),
      ...(typeof reply.commit === "string" ? { commit: reply.commit } : {}),
      files: reply.files as AppliedChanges["files"],
      stat: reply.stat as AppliedChanges["stat"],
      ...(Array.isArray(reply.warnings) ? { warnings: reply.warnings as string[] } : {}),
    };
  }

  async checkpoint(name: string, options: CheckpointOptions): Promise<CheckpointInfo> {
    const reply = await this.client.call(
      "session_checkpoint",
      {
        session_id: this.info.id,
        name,
        ...(options.message === undefined ? {} : { message: options.message }),
        ...(options.includeIgnored === undefined ? {} : { include_ignored: options.includeIgnored }),
      },
      { timeoutMs: TOOL_TIMEOUT_MS, signal: options.signal },
    );
    return remoteCheckpoint(reply);
  }

  async restore(name: string, signal?: AbortSignal): Promise<RestoredCheckpoint> {
    const reply = await this.client.call(
      "session_restore",
      { session_id: this.info.id, name },
      { timeoutMs: TOOL_TIMEOUT_MS, signal },
    );
    return {
      name: String(reply.name),
      changedFiles: Number(reply.changed_files),
      ...(typeof reply.cwd === "string" ? { cwd: reply.cwd } : {}),
    };
  }

  async checkpoints(signal?: AbortSignal): Promise<CheckpointInfo[]> {
    const reply = await this.client.call(
      "session_checkpoints",
      { session_id: this.info.id },
      { timeoutMs: TOOL_TIMEOUT_MS, signal },
    );
    return (reply.checkpoints as Array<Record<string, unknown>>).map(remoteCheckpoint);
  }

  async fork(n: number, checkpoint?: string, signal?: AbortSignal): Promise<SandboxBackend[]> {
    const reply = await this.client.call(
      "session_fork",
      { session_id: this.info.id, n, ...(checkpoint === undefined ? {} : { checkpoint }) },
      { timeoutMs: TOOL_TIMEOUT_MS, signal },
    );
    const forks = reply.forks as Array<{ session_id: string; session_secret: string; box: string }>;
    return forks.map(
      (f) =>
        new RemoteBackend(this.client, {
          ...this.info,
          id: f.session_id,
          box: f.box,
          sessionSecret: f.session_secret,
        }),
    );
  }

  async close(): Promise<void> {
    await this.client.call("session_destroy", { session_id: this.info.id }, { timeoutMs: TOOL_TIMEOUT_MS });
  }

  /** Runs a file script; a refusal is thrown as the in-process file access throws it. */
  private async script(
    script: string,
    path: string,
    args: string[],
    signal?: AbortSignal,
  ): Promise<ScriptRun> {
    const run = await runRemoteScript(this.client, this.info.id, script, args, signal);
    if (run.exitCode !== 0) throw refusal(run.exitCode, run.stderr, path, "path");
    return run;
  }
}

function headerFields(out: Buffer, count: number): { fields: string[]; next: number } {
  const fields: string[] = [];
  let at = 0;
  for (let i = 0; i < count; i++) {
    const end = out.indexOf(0, at);
    if (end === -1) break;
    fields.push(out.subarray(at, end).toString("utf8"));
    at = end + 1;
  }
  return { fields, next: at };
}

function remoteCheckpoint(reply: Record<string, unknown>): CheckpointInfo {
  return {
    name: String(reply.name),
    ...(typeof reply.message === "string" ? { message: reply.message } : {}),
    createdAt: String(reply.created_at),
    ageS: Number(reply.age_s),
    bytes: Number(reply.bytes),
    changedFiles: Number(reply.changed_files),
    includeIgnored: reply.include_ignored === true,
    ...(typeof reply.cwd === "string" ? { cwd: reply.cwd } : {}),
  };
}
