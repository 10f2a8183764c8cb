/**
 * What the live page reads, gathered from the server's state directory and its live sessions:
 * the session list, one session's facts (repository, cost, task stack), its diff (or, once it has
 * ended, the last diff kept of it). Read-only: nothing here writes a file or touches a box beyond
 * taking its diff.
 */
import { stat } from "node:fs/promises";
import { auditedSessions, auditLogPath, readAuditLog } from "../../session/audit-log.js";
import { readFinalDiff } from "../../session/final-diff.js";
import { readSessionRecord } from "../../session/session-record.js";
import { taskStackFacts, type TaskStackFacts } from "../../tasks/task-stack-facts.js";
import { TaskStackStore } from "../../tasks/task-stack-store.js";
import { emptyTally, tallyEntries, type LogTally } from "./entry-view.js";

/** A session this server holds now. */
export interface LiveSession {
  id: string;
  repo: { root: string };
  createdAt: Date;
  diffBytes(signal?: AbortSignal): Promise<Buffer>;
}

export interface LiveSources {
  /** The state directory whose audit logs and records are shown (and no other). */
  state: string;
  /** Where task stacks are kept (default: <state dir>/tasks). */
  tasksDir?: string;
  /** The server serves the task stack tools: its sessions may have a stack to show. */
  taskTools?: boolean;
  /** The sessions this server holds now. */
  sessions(): LiveSession[];
}

export interface SessionRow {
  id: string;
  repo: string | null;
  created_at: string | null;
  last_activity: string | null;
  /** Held by this server now (its box runs and its diff can be taken). */
  alive: boolean;
  ended: boolean;
  calls: number;
  cost_usd: number;
}

export interface SessionDetail extends SessionRow {
  image: string | null;
  base_commit: string | null;
  usage: { llm_requests: number; refused: number; input_tokens: number; output_tokens: number; usd: number };
  /** The server serves the task stack tools (a session of it without a stack has none yet). */
  task_tools: boolean;
  task_stack: TaskStackFacts | null;
  task_stack_problem?: string;
}

export type LiveDiff =
  { available: true; diff: string; truncated: boolean; saved?: true } | { available: false; why: string };

/** A diff is shown up to this many bytes. */
export const MAX_DIFF_BYTES = 2 * 1024 * 1024;

const ID = /^[0-9a-f]{12}$/;

export class LiveData {
  /** Each log's tally so far. */
  private readonly tallies = new Map<string, { offset: number; size: number; tally: LogTally }>();
  private readonly stacks: TaskStackStore;

  constructor(readonly sources: LiveSources) {
    this.stacks = new TaskStackStore({ dir: sources.tasksDir });
  }

  /** The id when it names a session of this server's state directory or one it holds; else undefined. */
  async known(id: string): Promise<string | undefined> {
    if (!ID.test(id)) return undefined;
    if (this.live(id)) return id;
    return (await auditedSessions(this.sources.state)).includes(id) ? id : undefined;
  }

  private live(id: string): LiveSession | undefined {
    return this.sources.sessions().find((s) => s.id === id);
  }

  /** Each log's read in progress: reads of one log go one after another. */
  private readonly reads = new Map<string, Promise<LogTally>>();

  /**
   * The log's tally, read on from where the last read stopped. Reads of one log are chained: two
   * at once (the page's list and detail refresh together) would both add the same new entries.
   */
  private tally(id: string): Promise<LogTally> {
    const before = this.reads.get(id);
    const read = (before ? before.catch(() => undefined) : Promise.resolve()).then(() => this.readOn(id));
    this.reads.set(id, read);
    const done = () => {
      if (this.reads.get(id) === read) this.reads.delete(id);
    };
    read.then(done, done);
    return read;
  }

  private async readOn(id: string): Promise<LogTally> {
    const path = auditLogPath(id, this.sources.state);
    if (!path) return emptyTally();
    const size = await stat(path).then(
      (s) => s.size,
      () => 0,
    );
    let cached = this.tallies.get(id);
    if (!cached || size < cached.size) cached = { offset: 0, size: 0, tally: emptyTally() };
    if (size > cached.offset) {
      const read = await readAuditLog(path, cached.offset);
      tallyEntries(cached.tally, read.entries);
      cached.offset = read.offset;
    }
    cached.size = size;
    this.tallies.set(id, cached);
    return cached.tally;
  }

  private async row(id: string): Promise<SessionRow> {
    const tally = await this.tally(id);
    const live = this.live(id);
    const record = live ? undefined : await readSessionRecord(id, this.sources.state);
    return {
      id,
      repo: live?.repo.root ?? record?.repo ?? tally.repo,
      created_at: live?.createdAt.toISOString() ?? record?.created_at ?? tally.first_ts,
      last_activity: tally.last_ts,
      alive: live !== undefined,
      ended: tally.ended && live === undefined,
      calls: tally.calls,
      cost_usd: tally.usd,
    };
  }

  /** Every session: the ones held now first, then the rest, newest activity first. */
  async sessions(): Promise<SessionRow[]> {
    const ids = new Set([
      ...this.sources.sessions().map((s) => s.id),
      ...(await auditedSessions(this.sources.state)),
    ]);
    const rows = await Promise.all([...ids].map((id) => this.row(id)));
    const when = (r: SessionRow) => r.last_activity ?? r.created_at ?? "";
    return rows.sort((a, b) => Number(b.alive) - Number(a.alive) || when(b).localeCompare(when(a)));
  }

  async detail(id: string): Promise<SessionDetail> {
    const row = await this.row(id);
    const tally = await this.tally(id);
    const record = await readSessionRecord(id, this.sources.state);
    const detail: SessionDetail = {
      ...row,
      image: record?.image ?? null,
      base_commit: record?.base_commit ?? null,
      usage: {
        llm_requests: tally.llm_requests,
        refused: tally.refused,
        input_tokens: tally.input_tokens,
        output_tokens: tally.output_tokens,
        usd: tally.usd,
      },
      task_tools: this.sources.taskTools === true,
      task_stack: null,
    };
    Object.assign(detail, await taskStackFacts(this.stacks, id));
    return detail;
  }

  /**
   * The session's diff as text: taken from its box when this server holds it, else the last diff
   * kept when it ended (`saved`); else why there is none.
   */
  async diff(id: string, signal?: AbortSignal): Promise<LiveDiff> {
    const live = this.live(id);
    if (!live) {
      const kept = await readFinalDiff(id, this.sources.state);
      if (kept) {
        const truncated = kept.diff.length > MAX_DIFF_BYTES;
        return {
          available: true,
          diff: (truncated ? kept.diff.subarray(0, MAX_DIFF_BYTES) : kept.diff).toString("utf8"),
          truncated: truncated || kept.cutFromBytes !== undefined,
          saved: true,
        };
      }
      return {
        available: false,
        why: `session ${id} is not held by this server (ended, or served by another process) and no last diff of it was kept; its diff can be taken with \`drydock sessions diff ${id}\` while its box runs`,
      };
    }
    const bytes = await live.diffBytes(signal);
    const truncated = bytes.length > MAX_DIFF_BYTES;
    return {
      available: true,
      diff: (truncated ? bytes.subarray(0, MAX_DIFF_BYTES) : bytes).toString("utf8"),
      truncated,
    };
  }
}
