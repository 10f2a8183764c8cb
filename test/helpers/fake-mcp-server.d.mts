import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";

/** What the fake's `aider_ai_code` does. */
export type FakeMode =
  | "success"
  | "text_only"
  | "success_false"
  | "error_key"
  | "is_error"
  | "malformed"
  | "slow"
  | "progress"
  | "crash";

export declare const fakeModels: string[];

export declare function buildFakeServer(mode: FakeMode): McpServer;

export interface HttpFakeServer {
  url: string;
  port: number;
  sessionCount(): number;
  close(): Promise<void>;
}

export declare function startHttpFakeServer(options?: {
  mode?: FakeMode;
  token?: string;
  port?: number;
}): Promise<HttpFakeServer>;
