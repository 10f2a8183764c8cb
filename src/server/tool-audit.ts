/**
 * The audit side of the one tool wrapper: which sessions a call touched (seen through the
 * services the tool is handed, so no tool has to say), and the log entry it leaves in each.
 * Only sessions the services actually gave the caller count: a client cannot write into another
 * client's log by naming its session.
 */
import { appendAuditEntry } from "../session/audit-log.js";
import { redactLogText } from "../util/log.js";
import {
  errorOutcome,
  outputBytes,
  successOutcome,
  summarizeArgs,
  type AuditEntry,
  type AuditOutcome,
} from "../session/audit-entry.js";
import type { Session } from "../session/session.js";
import { RunningCall, runningCalls } from "./live/running-calls.js";
import type { StoredTaskStack } from "../tasks/task-stack-access.js";
import type { ToolServices } from "../tools/tool.js";

/** A call still running after this long leaves a line saying so, so a watcher (and a crash) sees it. */
export const RUNNING_LINE_AFTER_MS = 2_000;

export class ToolCallAudit {
  private readonly touched = new Set<string>();
  private readonly started = Date.now();
  private readonly runningTimer: NodeJS.Timeout;
  /** The call as the live view sees it while it runs, with what it has printed so far. */
  private readonly live: RunningCall;
  /** The services to hand the tool: the same, noting each session they give out. */
  readonly services: ToolServices;

  constructor(
    private readonly tool: string,
    private readonly clientId: string,
    services: ToolServices,
    /** The arguments as the client sent them (summarized when logged). */
    private readonly args: unknown,
    private readonly state?: string,
  ) {
    this.services = this.watch(services);
    this.runningTimer = setTimeout(() => this.running(), RUNNING_LINE_AFTER_MS);
    this.runningTimer.unref();
    this.live = new RunningCall(
      new Date(this.started).toISOString(),
      tool,
      clientId,
      summarizeArgs(tool, args),
      () => this.touched,
    );
    runningCalls.add(this.live);
  }

  /** A whole line the call printed (a command's output, cleaned), for the live view while it runs. */
  output(line: string): void {
    this.live.line(line);
  }

  private running(): void {
    for (const session of this.touched) {
      const entry = this.entry(session, { ok: false, running: true }, null);
      appendAuditEntry({ ...entry, duration_ms: null }, this.state);
    }
  }

  private watch(services: ToolServices): ToolServices {
    const partial = services as Partial<ToolServices>;
    const sessions = partial.sessions;
    const stacks = partial.taskStacks;
    const note = (session: Session) => {
      this.touched.add(session.id);
      return session;
    };
    return {
      ...services,
      ...(sessions && {
        sessions: {
          resolve: async (clientId, sessionId, signal) =>
            note(await sessions.resolve(clientId, sessionId, signal)),
          create: async (clientId, options, secretSha256) =>
            note(await sessions.create(clientId, options, secretSha256)),
          resume: async (clientId, sessionId, secret) =>
            note(await sessions.resume(clientId, sessionId, secret)),
          list: (clientId) => sessions.list(clientId),
          fork: async (clientId, sessionId, options, secretHashes) => {
            const forks = await sessions.fork(clientId, sessionId, options, secretHashes);
            forks.forEach(note);
            return forks;
          },
          destroy: async (clientId, sessionId) => {
            await sessions.destroy(clientId, sessionId);
            this.touched.add(sessionId);
          },
        },
      }),
      ...(stacks && {
        taskStacks: {
          open: async (clientId: string, sessionId: string | undefined): Promise<StoredTaskStack> => {
            const stack = await stacks.open(clientId, sessionId);
            // A stack counts when it is one of the caller's live sessions' (not a box-less name).
            if (sessionId !== undefined && sessions?.list(clientId).some((s) => s.id === sessionId)) {
              this.touched.add(sessionId);
            }
            return stack;
          },
        },
      }),
    } as ToolServices;
  }

  /** Logs the call in each session it touched, with its reply or its (redacted) error. */
  finish(result: { reply: unknown } | { error: string }): void {
    clearTimeout(this.runningTimer);
    // Gone before its last line is written: a watcher never sees it running after its end.
    runningCalls.remove(this.live);
    const outcome: AuditOutcome =
      "reply" in result ? successOutcome(result.reply, redactLogText) : errorOutcome(result.error);
    // A reply that names its session (job_status of a background aider call) counts as touching it,
    // since only the caller's own jobs answer.
    if ("reply" in result) {
      const named = (result.reply as { session_id?: unknown } | null)?.session_id;
      if (typeof named === "string" && this.touched.size === 0) this.touched.add(named);
    }
    if (this.touched.size === 0) return;
    const bytes = "reply" in result ? outputBytes(result.reply) : null;
    for (const session of this.touched) appendAuditEntry(this.entry(session, outcome, bytes), this.state);
  }

  private entry(session: string, outcome: AuditOutcome, bytes: number | null): AuditEntry {
    return {
      ts: new Date(this.started).toISOString(),
      session,
      actor: "agent",
      tool: this.tool,
      args: summarizeArgs(this.tool, this.args),
      outcome,
      duration_ms: Date.now() - this.started,
      output_bytes: bytes,
      client: this.clientId,
    };
  }
}
