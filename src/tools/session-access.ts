/**
 * How tools reach sessions. The server implements it: it scopes every session to the client that
 * created it and creates the client's default session on first use.
 */
import type { Session, SessionOptions } from "../session/session.js";

export interface SessionAccess {
  /** The session `sessionId` of this client, or the client's default session when omitted. */
  resolve(clientId: string, sessionId: string | undefined, signal?: AbortSignal): Promise<Session>;
  /**
   * A new session of this client; `secretSha256` (session/session-secret.ts) is recorded so that
   * the holder of the secret can resume the session when no client holds it.
   */
  create(clientId: string, options: Partial<SessionOptions>, secretSha256?: string): Promise<Session>;
  /**
   * Takes up a kept session no client holds (its server restarted, or its client went away), for
   * the client that shows its secret; a wrong secret is answered like an unknown session.
   */
  resume(clientId: string, sessionId: string, secret: string): Promise<Session>;
  list(clientId: string): Session[];
  /**
   * `n` new sessions of this client starting from its session's state now (or its checkpoint
   * `checkpoint`), counted against admission; all or none.
   */
  fork(
    clientId: string,
    sessionId: string | undefined,
    options: { n: number; checkpoint?: string; signal?: AbortSignal },
    secretHashes?: string[],
  ): Promise<Session[]>;
  destroy(clientId: string, sessionId: string): Promise<void>;
}

declare module "./tool.js" {
  interface ToolServices {
    sessions: SessionAccess;
  }
}
