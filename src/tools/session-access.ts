/**
 * How tools reach sessions. The server implements it: it scopes every session to the client that
 * created it and creates the client's default session on first use.
 */
import type { Session, SessionOptions } from "../session/session.js";

export interface SessionAccess {
  /** The session `sessionId` of this client, or the client's default session when omitted. */
  resolve(clientId: string, sessionId: string | undefined, signal?: AbortSignal): Promise<Session>;
  create(clientId: string, options: Partial<SessionOptions>): Promise<Session>;
  list(clientId: string): Session[];
  destroy(clientId: string, sessionId: string): Promise<void>;
}

declare module "./tool.js" {
  interface ToolServices {
    sessions: SessionAccess;
  }
}
