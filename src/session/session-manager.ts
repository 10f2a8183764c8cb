/**
 * The sessions one drydock process owns, by id. It removes boxes left by dead drydock processes
 * when it starts, and every box of its own when it closes.
 */
import type { Engine } from "../engine/engine.js";
import { SessionNotFoundError } from "../util/errors.js";
import { logger } from "../util/log.js";
import { pruneOrphans } from "./orphans.js";
import { Session, newSessionId, type SessionOptions } from "./session.js";

const log = logger("sessions");

export class SessionManager {
  private readonly sessions = new Map<string, Session>();
  private readonly creating = new Set<Promise<unknown>>();

  private constructor(readonly engine: Engine) {}

  static async start(engine: Engine): Promise<SessionManager> {
    await pruneOrphans(engine).catch((error) =>
      log.warn(`could not prune orphans: ${(error as Error).message}`),
    );
    return new SessionManager(engine);
  }

  async create(options: SessionOptions): Promise<Session> {
    const creating = Session.create(this.engine, options, newSessionId());
    this.creating.add(creating);
    try {
      const session = await creating;
      this.sessions.set(session.id, session);
      return session;
    } finally {
      this.creating.delete(creating);
    }
  }

  get(id: string): Session {
    const session = this.sessions.get(id);
    if (!session) throw new SessionNotFoundError(id);
    return session;
  }

  has(id: string): boolean {
    return this.sessions.has(id);
  }

  list(): Session[] {
    return [...this.sessions.values()];
  }

  async destroy(id: string): Promise<void> {
    const session = this.get(id);
    this.sessions.delete(id);
    await session.destroy();
  }

  /** Removes every session (and waits for sessions still being created, then removes them too). */
  async closeAll(): Promise<void> {
    await Promise.allSettled([...this.creating]);
    const all = this.list();
    this.sessions.clear();
    await Promise.allSettled(all.map((s) => s.destroy()));
  }

  /** Forgets sessions without removing their boxes (`--keep-sessions`). */
  detachAll(): Session[] {
    const all = this.list();
    this.sessions.clear();
    return all;
  }
}
