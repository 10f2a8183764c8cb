import { StreamableHTTPError } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { ErrorCode, McpError } from "@modelcontextprotocol/sdk/types.js";
import { failedResult, type TaskResult } from "./task-result.js";

/**
 * Raised by the connection when the server could not be started, reached, or initialised, so the
 * bridge can tell "never connected" from "broke during the call".
 */
export class ServerConnectError extends Error {
  override name = "ServerConnectError";
  constructor(
    /** What was being reached, e.g. `stdio server "drydock serve"`. */
    readonly target: string,
    /** The last lines the server wrote to stderr, when it is a child process. */
    readonly stderrTail: string,
    options: { cause: unknown },
  ) {
    super(`could not connect to ${target}`, options);
  }
}

/** What the bridge knows about a failed call that helps explain it. */
export interface CallFailureContext {
  toolName: string;
  timeoutMs: number;
  /** True when the caller's AbortSignal fired. */
  aborted: boolean;
  /** The server's recent stderr, when it is a child process. */
  stderrTail?: string;
}

/** The first string `code` on an error or its causes (`ENOENT`, `ECONNREFUSED`, …). */
export function errorCode(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code === "string") return code;
  const cause = (error as { cause?: unknown } | null)?.cause;
  return cause !== undefined && cause !== error ? errorCode(cause) : undefined;
}

function messageOf(error: unknown): string {
  if (error instanceof Error) return error.message;
  return String(error);
}

function withStderr(message: string, stderrTail: string | undefined): string {
  const tail = stderrTail?.trim();
  return tail ? `${message}\nserver stderr (last lines):\n${tail}` : message;
}

function seconds(ms: number): string {
  return ms >= 1000 ? `${Math.round(ms / 100) / 10} s` : `${ms} ms`;
}

/** Why the server could not be reached, with the option that fixes it. */
function describeConnectFailure(error: ServerConnectError, timeoutMs: number): string {
  const cause = error.cause;
  const code = errorCode(cause);
  if (code === "ENOENT")
    return `${error.target} could not be started: the command was not found; check server.command and PATH`;
  if (code === "EACCES")
    return `${error.target} could not be started: the command is not executable; check server.command`;
  if (code === "ECONNREFUSED") {
    return `nothing is listening at ${error.target}; start the server (e.g. \`drydock serve --http\`) or check server.url`;
  }
  if (cause instanceof StreamableHTTPError && (cause.code === 401 || cause.code === 403)) {
    return `${error.target} refused the connection (HTTP ${cause.code}); check server.token`;
  }
  if (cause instanceof McpError && cause.code === ErrorCode.RequestTimeout) {
    return `${error.target} did not finish the MCP handshake within ${seconds(timeoutMs)}; check that the command starts an MCP server`;
  }
  if (cause instanceof McpError && cause.code === ErrorCode.ConnectionClosed) {
    return `${error.target} exited or closed the connection before the MCP handshake finished; check server.command and server.args`;
  }
  return `${error.target} could not be reached: ${messageOf(cause)}`;
}

/**
 * Turns anything thrown while calling a tool into a FAILED TaskResult whose message says which
 * kind of failure it was: not connected, timed out, cancelled, connection lost mid-call, or an
 * error the server answered with.
 */
export function callFailureResult(error: unknown, context: CallFailureContext): TaskResult {
  const { toolName } = context;
  const prefix = `${toolName} failed`;
  if (error instanceof ServerConnectError) {
    const message = describeConnectFailure(error, context.timeoutMs);
    return failedResult("connect", withStderr(`${prefix}: ${message}`, error.stderrTail), {
      error: messageOf(error.cause),
    });
  }
  if (context.aborted) {
    return failedResult("cancelled", `${prefix}: cancelled by the caller before the server replied`, {
      error: messageOf(error),
    });
  }
  if (error instanceof McpError && error.code === ErrorCode.RequestTimeout) {
    return failedResult(
      "timeout",
      `${prefix}: timed out after ${seconds(context.timeoutMs)} without a reply or progress from the server; raise timeoutMs for long runs`,
      { error: error.message, timeoutMs: context.timeoutMs },
    );
  }
  if (error instanceof McpError && error.code === ErrorCode.ConnectionClosed) {
    return failedResult(
      "transport",
      withStderr(
        `${prefix}: the connection to the server closed during the call (the server exited or crashed); the next call reconnects`,
        context.stderrTail,
      ),
      { error: error.message },
    );
  }
  if (error instanceof McpError) {
    // The server answered the request with a JSON-RPC error: an unknown tool, bad arguments.
    return failedResult("tool_error", `${prefix}: the server rejected the call: ${error.message}`, {
      error: error.message,
      code: error.code,
    });
  }
  if (error instanceof StreamableHTTPError) {
    const hint = error.code === 401 || error.code === 403 ? "; check server.token" : "";
    return failedResult(
      "transport",
      `${prefix}: HTTP ${error.code ?? "error"} from the server${hint}: ${error.message}`,
      {
        error: error.message,
        httpStatus: error.code,
      },
    );
  }
  return failedResult(
    "transport",
    withStderr(`${prefix}: transport error: ${messageOf(error)}`, context.stderrTail),
    { error: messageOf(error) },
  );
}
