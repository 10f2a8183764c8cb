/**
 * Session and task-stack access for a command agent's MCP endpoint: exactly one session, the
 * eval task's. Any other session id is answered like an unknown one, and sessions cannot be
 * created or destroyed through it.
 */
import type { Session, SessionOptions } from "../session/session.js";
import type { StoredTaskStack, TaskStackAccess, TaskStackOpener } from "../tasks/task-stack-access.js";
import type { SessionAccess } from "../tools/session-access.js";
import { DrydockError, SessionNotFoundError } from "../util/errors.js";

export class SingleSessionAccess implements SessionAccess, TaskStackAccess {
  constructor(
    private readonly session: Session,
    private readonly stacks: TaskStackOpener,
  ) {}

  async resolve(_clientId: string, sessionId: string | undefined): Promise<Session> {
    if (sessionId !== undefined && sessionId !== this.session.id) throw new SessionNotFoundError(sessionId);
    return this.session;
  }

  async create(_clientId: string, _options: Partial<SessionOptions>): Promise<Session> {
    throw this.refuse("create sessions");
  }

  list(): Session[] {
    return [this.session];
  }

  async destroy(_clientId: string, _sessionId: string): Promise<void> {
    throw this.refuse("destroy sessions");
  }

  open(_clientId: string, sessionId: string | undefined): Promise<StoredTaskStack> {
    if (sessionId !== undefined && sessionId !== this.session.id) throw new SessionNotFoundError(sessionId);
    return this.stacks.open(this.session.id);
  }

  private refuse(what: string): DrydockError {
    return new DrydockError(
      "not_allowed",
      `this endpoint serves one eval task's session (${this.session.id}) and cannot ${what}; work in that session (omit session_id)`,
    );
  }
}
