/**
 * The aider service with a tally per session: what every aider call in a box cost, whether the
 * runner called aider itself or a command agent did through the box's MCP endpoint.
 */
import type { Session } from "../session/session.js";
import {
  AiderService,
  type AiderCodeResult,
  type AiderRunHooks,
  type PreparedAiderCall,
} from "../tools/aider/aider-service.js";

export interface SessionUsage {
  tokens: { input: number; output: number };
  costUsd: number;
  llmRequests: number;
  model?: string;
}

export class MeteredAiderService extends AiderService {
  private readonly usage = new Map<string, SessionUsage>();

  override async run(
    session: Session,
    call: PreparedAiderCall,
    hooks?: AiderRunHooks,
  ): Promise<AiderCodeResult> {
    const result = await super.run(session, call, hooks);
    const u = this.usage.get(session.id) ?? { tokens: { input: 0, output: 0 }, costUsd: 0, llmRequests: 0 };
    u.tokens.input += result.tokens.input;
    u.tokens.output += result.tokens.output;
    u.costUsd += result.cost_usd;
    u.llmRequests += result.llm_requests;
    u.model = result.model;
    this.usage.set(session.id, u);
    return result;
  }

  /** What the session's aider calls cost so far; forgets it (sessions are not reused). */
  takeUsage(sessionId: string): SessionUsage {
    const u = this.usage.get(sessionId) ?? { tokens: { input: 0, output: 0 }, costUsd: 0, llmRequests: 0 };
    this.usage.delete(sessionId);
    return u;
  }
}
