import { realpath } from "node:fs/promises";
import { isAbsolute, relative, resolve, sep } from "node:path";
import { callFailureResult } from "./call-failure.js";
import { RepoFileAccess, type FileAccess } from "./file-access.js";
import type { ContextSource, FileContext, SetFileContextResult } from "./file-context.js";
import { McpConnection } from "./mcp-connection.js";
import type { MemorySystem } from "./memory-system.js";
import { RepoMemory } from "./repo-memory.js";
import { checkDurationMs, checkServerConfig, type AiderServerConfig } from "./server-config.js";
import { failedResult, type TaskResult } from "./task-result.js";
import { mapToolReply } from "./tool-reply.js";

/** A progress notification from the server during a long call (aider's output lines, for drydock). */
export interface AiderProgress {
  toolName: string;
  progress: number;
  total?: number;
  message?: string;
}

/** Options for {@link AiderBridge}. */
export interface AiderBridgeOptions {
  /** How to reach the server: spawn it over stdio, or connect over Streamable HTTP. */
  server: AiderServerConfig;
  /** Finds files relevant to a query; defaults to a {@link RepoMemory} over `repoPath`. */
  memory?: MemorySystem;
  /** Decides which paths may enter the file context; defaults to a {@link RepoFileAccess} over `repoPath`. */
  fileAccess?: FileAccess;
  /** The repository the file context refers to; defaults to the current directory. */
  repoPath?: string;
  /** How long a call may go without a reply or a progress notification; default 600_000 ms. */
  timeoutMs?: number;
  /** A hard cap on a call's duration even while progress arrives; none by default. */
  maxTotalTimeoutMs?: number;
  /** How long starting or reaching the server and the MCP handshake may take; default 30_000 ms. */
  connectTimeoutMs?: number;
  /** Receives the server's progress notifications during long calls. */
  onProgress?: (progress: AiderProgress) => void;
}

/** Per-call overrides for {@link AiderBridge.callAiderTool}. */
export interface CallAiderToolOptions {
  /** Cancels the call: the server is told and the result is FAILED with `notes.failure = "cancelled"`. */
  signal?: AbortSignal;
  /** Overrides the bridge's `timeoutMs` for this call. */
  timeoutMs?: number;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function checkOptions(options: unknown): string | undefined {
  if (!isRecord(options)) return "options: expected an object with at least `server`";
  const o = options;
  if (o.onProgress !== undefined && typeof o.onProgress !== "function")
    return "onProgress: expected a function";
  return (
    checkServerConfig(o.server) ??
    checkDurationMs("timeoutMs", o.timeoutMs) ??
    checkDurationMs("maxTotalTimeoutMs", o.maxTotalTimeoutMs) ??
    checkDurationMs("connectTimeoutMs", o.connectTimeoutMs)
  );
}

/**
 * An MCP client for drydock's aider tools (or any server with the aider MCP contract) that turns
 * every reply, failure and timeout into a {@link TaskResult} and never throws from a call. The
 * connection opens on the first call, is reused, reconnects once when the server went away
 * between calls, and is closed by {@link AiderBridge.close} or `await using`.
 *
 * It also keeps a file context: the files `aider_ai_code` edits when a call names none.
 */
export class AiderBridge implements AsyncDisposable {
  /** The repository root the file context is relative to. */
  readonly repoPath: string;
  private readonly configProblem: string | undefined;
  private readonly connection: McpConnection | undefined;
  private readonly memory: MemorySystem;
  private readonly fileAccess: FileAccess;
  private readonly timeoutMs: number;
  private readonly maxTotalTimeoutMs: number | undefined;
  private readonly onProgress: ((progress: AiderProgress) => void) | undefined;
  private closed = false;
  private fileContext: string[] = [];
  private contextSource: ContextSource | null = null;

  /** Never throws: a missing or invalid configuration makes every call return a FAILED result saying what to fix. */
  constructor(options: AiderBridgeOptions) {
    const raw: Partial<AiderBridgeOptions> = isRecord(options) ? options : {};
    this.configProblem = checkOptions(options);
    this.repoPath = resolve(typeof raw.repoPath === "string" ? raw.repoPath : process.cwd());
    this.memory = raw.memory ?? new RepoMemory({ repoPath: this.repoPath });
    this.fileAccess = raw.fileAccess ?? new RepoFileAccess(this.repoPath);
    this.timeoutMs = raw.timeoutMs ?? 600_000;
    this.maxTotalTimeoutMs = raw.maxTotalTimeoutMs;
    this.onProgress = raw.onProgress;
    if (this.configProblem === undefined && raw.server) {
      this.connection = new McpConnection(raw.server, raw.connectTimeoutMs ?? 30_000);
    }
  }

  /** True while a connection to the server is open. */
  get connected(): boolean {
    return this.connection?.connected ?? false;
  }

  /**
   * Calls `toolName` on the server with `params` and maps the outcome to a TaskResult (see
   * {@link mapToolReply}). `aider_ai_code` without `relative_editable_files` edits the current
   * file context, as paths relative to the repository.
   */
  async callAiderTool(
    toolName: string,
    params: Record<string, unknown> = {},
    options: CallAiderToolOptions = {},
  ): Promise<TaskResult> {
    const name = typeof toolName === "string" ? toolName : String(toolName);
    if (this.configProblem !== undefined || !this.connection) {
      return failedResult(
        "config",
        `${name} not called: invalid AiderBridge configuration: ${this.configProblem}`,
      );
    }
    if (this.closed) {
      return failedResult("closed", `${name} not called: the AiderBridge is closed; create a new one`);
    }
    if (typeof toolName !== "string" || toolName.trim() === "") {
      return failedResult(
        "config",
        'toolName: expected a tool name such as "aider_ai_code" or "list_models"',
      );
    }
    if (!isRecord(params)) return failedResult("config", `${name} not called: params: expected an object`);
    const timeoutProblem = checkDurationMs("timeoutMs", options.timeoutMs);
    if (timeoutProblem) return failedResult("config", `${name} not called: ${timeoutProblem}`);

    const args = await this.withFileContext(name, params);
    const timeoutMs = options.timeoutMs ?? this.timeoutMs;
    const onProgress = this.onProgress;
    try {
      const reply = await this.connection.callTool(name, args, {
        timeoutMs,
        maxTotalTimeoutMs: this.maxTotalTimeoutMs,
        signal: options.signal,
        onProgress:
          onProgress &&
          ((p) => {
            try {
              onProgress({ toolName: name, ...p });
            } catch {
              // A failing progress callback must not break the call it reports on.
            }
          }),
      });
      return mapToolReply(name, reply);
    } catch (error) {
      if (this.closed)
        return failedResult("closed", `${name} failed: the AiderBridge was closed during the call`);
      return callFailureResult(error, {
        toolName: name,
        timeoutMs,
        aborted: options.signal?.aborted ?? false,
        stderrTail: this.connection.recentStderr,
      });
    }
  }

  /**
   * Replaces the file context with those of `paths` (absolute or relative to the repository) that
   * the FileAccess accepts; the rest are dropped and named in `message`.
   */
  async setFileContext(
    paths: string[],
    source: ContextSource = "explicit_specification",
  ): Promise<SetFileContextResult> {
    const given = Array.isArray(paths) ? paths : [];
    const { kept, dropped } = await this.validate(given);
    this.fileContext = kept;
    this.contextSource = source;
    const result: SetFileContextResult = {
      status: !Array.isArray(paths)
        ? "error"
        : dropped.length === 0
          ? "success"
          : kept.length > 0
            ? "warning"
            : "error",
      file_count: kept.length,
      context_source: source,
    };
    if (!Array.isArray(paths)) result.message = "paths: expected an array of file paths";
    else if (dropped.length > 0)
      result.message = `dropped ${dropped.length} of ${given.length} paths: ${dropped.join("; ")}`;
    return result;
  }

  /** The current file context: absolute paths, their count, and where they came from. */
  getFileContext(): FileContext {
    return {
      file_paths: [...this.fileContext],
      file_count: this.fileContext.length,
      context_source: this.contextSource,
    };
  }

  /**
   * Asks the memory system for files relevant to `query`, keeps those the FileAccess accepts, and
   * when any remain makes them the file context (source `associative_matching`). Returns them as
   * absolute paths; an empty list when the lookup failed or found nothing usable.
   */
  async getContextForQuery(query: string): Promise<string[]> {
    if (typeof query !== "string" || query.trim() === "") return [];
    let paths: string[];
    try {
      const found = await this.memory.getRelevantContextFor({ query });
      if (found.error !== undefined || !Array.isArray(found.matches)) return [];
      paths = found.matches.map((match) => match.path);
    } catch {
      return [];
    }
    const { kept } = await this.validate(paths);
    if (kept.length === 0) return [];
    this.fileContext = kept;
    this.contextSource = "associative_matching";
    return [...kept];
  }

  /** Closes the connection and stops a stdio server; later calls return FAILED. Safe to call twice. */
  async close(): Promise<void> {
    this.closed = true;
    await this.connection?.close();
  }

  /** Same as {@link AiderBridge.close}, for `await using bridge = new AiderBridge(…)`. */
  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }

  private async validate(paths: unknown[]): Promise<{ kept: string[]; dropped: string[] }> {
    const kept: string[] = [];
    const dropped: string[] = [];
    for (const path of paths) {
      if (typeof path !== "string") {
        dropped.push(`${JSON.stringify(path)}: not a path`);
        continue;
      }
      const verdict = await this.fileAccess.check(path).catch((error: unknown) => ({
        ok: false as const,
        reason: error instanceof Error ? error.message : String(error),
      }));
      if (!verdict.ok) dropped.push(`${path}: ${verdict.reason}`);
      else if (!kept.includes(verdict.absolutePath)) kept.push(verdict.absolutePath);
    }
    return { kept, dropped };
  }

  /** Fills in `relative_editable_files` of an `aider_ai_code` call from the file context. */
  private async withFileContext(
    name: string,
    params: Record<string, unknown>,
  ): Promise<Record<string, unknown>> {
    if (
      name !== "aider_ai_code" ||
      params.relative_editable_files !== undefined ||
      this.fileContext.length === 0
    ) {
      return params;
    }
    const root = await realpath(this.repoPath).catch(() => this.repoPath);
    const relativePaths = this.fileContext
      .map((path) => relative(root, path))
      .filter((rel) => rel !== "" && rel !== ".." && !rel.startsWith(`..${sep}`) && !isAbsolute(rel))
      .map((rel) => rel.split(sep).join("/"));
    return { ...params, relative_editable_files: relativePaths };
  }
}
