/**
 * Session and task-stack access for a command agent's MCP endpoint: exactly one session, the
 * eval task's. Any other session id is answered like an unknown one, and sessions cannot be
 * created or destroyed through it.
 */
import type { Session, SessionOptions } from "../session/session.js";
import type { StoredTaskStack, TaskStackAccess, TaskStackOpener } from "../tasks/task-stack-access.js";
import type { SessionAccess } from "../tools/session-access.js";
import { DrydockError } from "../util/errors.js";

export class SingleSessionAccess implements SessionAccess, TaskStackAccess {
  constructor(
    private readonly session: Session,
    private readonly stacks: TaskStackOpener,
  ) {}

  async resolve(_clientId: string, sessionId: string | undefined): Promise<Session> {
    this.check(sessionId);
    return this.session;
  }

  async create(_clientId: string, _options: Partial<SessionOptions>): Promise<Session> {
    throw this.refuse("create sessions");
  }

  async resume(_clientId: string, sessionId: string): Promise<Session> {
    this.check(sessionId);
    return this.session;
  }

  list(): Session[] {
    return [this.session];
  }

  async fork(): Promise<Session[]> {
    throw this.refuse("fork sessions");
  }

  async destroy(_clientId: string, _sessionId: string): Promise<void> {
    throw this.refuse("destroy sessions");
  }

  open(_clientId: string, sessionId: string | undefined): Promise<StoredTaskStack> {
    this.check(sessionId);
    return this.stacks.open(this.session.id);
  }

  /** Another id is answered like an unknown one: it says nothing about other tasks' sessions. */
  private check(sessionId: string | undefined): void {
    if (sessionId === undefined || sessionId === this.session.id) return;
    throw new DrydockError(
      "session_not_found",
      `session ${sessionId} not found; this endpoint serves only session ${this.session.id} (omit session_id to use it)`,
    );
  }

  private refuse(what: string): DrydockError {
    return new DrydockError(
      "not_allowed",
      `this endpoint serves one eval task's session (${this.session.id}) and cannot ${what}; work in that session (omit session_id)`,
    );
  }
}
