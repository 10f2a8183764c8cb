/**
 * How the bridge reaches a drydock (or any aider MCP) server, and the pure check of that
 * configuration. The check runs on plain data so a config read from JSON gets the same clear
 * message as a typo in TypeScript.
 */

/** Spawn the server as a child process and talk MCP over its stdin/stdout. */
export interface StdioServerConfig {
  transport: "stdio";
  /** The executable, e.g. `"drydock"` or `"node"`. Looked up on PATH. */
  command: string;
  /** Arguments, e.g. `["serve", "--repo", "/path/to/repo"]`. */
  args?: string[];
  /**
   * Extra environment for the server. The child otherwise inherits only a safe default set
   * (HOME, PATH, SHELL, TERM, USER, LOGNAME), so pass provider keys or `DRYDOCK_*` settings here.
   * Entries whose value is undefined are left out, so `{ KEY: process.env.KEY }` is fine.
   */
  env?: Record<string, string | undefined>;
  /** Working directory of the server process; defaults to the caller's. */
  cwd?: string;
  /** Where the server's stderr goes: copied to this process's stderr (default) or dropped. */
  stderr?: "inherit" | "ignore";
}

/** Connect to a running server over Streamable HTTP. */
export interface HttpServerConfig {
  transport: "http";
  /** The MCP endpoint, e.g. `"http://127.0.0.1:8765/mcp"`. */
  url: string;
  /** Sent as `Authorization: Bearer <token>` (drydock's `DRYDOCK_TOKEN`). */
  token?: string;
}

/** Either way of reaching the server. */
export type AiderServerConfig = StdioServerConfig | HttpServerConfig;

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function isStringArray(value: unknown): value is string[] {
  return Array.isArray(value) && value.every((item) => typeof item === "string");
}

const example =
  '{ transport: "stdio", command: "drydock", args: ["serve"] } or { transport: "http", url: "http://127.0.0.1:8765/mcp", token }';

/**
 * Returns what is wrong with `value` as a server configuration (naming the field and the fix), or
 * undefined when it is usable.
 */
export function checkServerConfig(value: unknown): string | undefined {
  if (value === undefined || value === null) return `server: missing; pass ${example}`;
  if (!isRecord(value)) return `server: expected an object such as ${example}`;
  const { transport } = value;
  if (transport === "stdio") {
    if (typeof value.command !== "string" || value.command.trim() === "") {
      return 'server.command: missing; name the executable that starts the server, e.g. "drydock"';
    }
    if (value.args !== undefined && !isStringArray(value.args)) {
      return "server.args: expected an array of strings";
    }
    if (value.env !== undefined) {
      const values = isRecord(value.env) ? Object.values(value.env) : [1];
      if (!values.every((v) => typeof v === "string" || v === undefined)) {
        return "server.env: expected an object of string values";
      }
    }
    if (value.cwd !== undefined && (typeof value.cwd !== "string" || value.cwd === "")) {
      return "server.cwd: expected a directory path";
    }
    if (value.stderr !== undefined && value.stderr !== "inherit" && value.stderr !== "ignore") {
      return 'server.stderr: expected "inherit" or "ignore"';
    }
    return undefined;
  }
  if (transport === "http") {
    if (typeof value.url !== "string" || value.url === "") {
      return 'server.url: missing; give the MCP endpoint, e.g. "http://127.0.0.1:8765/mcp"';
    }
    let url: URL;
    try {
      url = new URL(value.url);
    } catch {
      return `server.url: ${JSON.stringify(value.url)} is not a URL; give e.g. "http://127.0.0.1:8765/mcp"`;
    }
    if (url.protocol !== "http:" && url.protocol !== "https:") {
      return `server.url: protocol ${url.protocol} is not supported; use http: or https:`;
    }
    if (value.token !== undefined && (typeof value.token !== "string" || value.token === "")) {
      return "server.token: expected a non-empty string (or leave it out)";
    }
    return undefined;
  }
  return `server.transport: expected "stdio" or "http", got ${JSON.stringify(transport)}`;
}

/** Returns what is wrong with a duration option in milliseconds, or undefined when it is usable. */
export function checkDurationMs(field: string, value: unknown): string | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== "number" || !Number.isFinite(value) || value <= 0) {
    return `${field}: expected a positive number of milliseconds, got ${JSON.stringify(value)}`;
  }
  return undefined;
}
