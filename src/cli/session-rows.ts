/**
 * `drydock sessions list`: what each box is, as rows for a table or JSON. Pure: the command reads
 * the engine and the session records, this decides what they mean.
 */
import type { BoxSummary } from "../engine/engine.js";
import {
  LABEL_CREATED,
  LABEL_OWNER,
  LABEL_POOL,
  LABEL_SESSION,
  LABEL_STATE,
  keptUntil,
  parseOwner,
} from "../engine/labels.js";
import { LABEL_EVAL_TASK } from "../eval/run-attempt.js";

export interface SessionRow {
  session: string;
  box: string;
  state: string;
  created: string;
  age_s: number;
  /** The repository the session copied in; null for an idle warm box or when unknown. */
  repo: string | null;
  /** What the box is: a session, an idle warm box, or an eval task's box. */
  kind: "session" | "warm" | "eval";
  eval_task: string | null;
  owner: string;
  /** Whether the drydock process that made the box runs: null when it is on another host. */
  alive: boolean | null;
  /** No live owner and not kept: `drydock sessions prune` removes it. */
  orphan: boolean;
  /**
   * A session kept with `serve --keep-sessions`: until when (ISO time) its box outlives a dead
   * owner, for a later server to continue it; null when not kept (or its time has passed).
   */
  kept_until: string | null;
  /** Made by a warm pool (idle, or taken by the session it names). */
  pool: boolean;
  state_dir: string | null;
}

export interface RowFacts {
  now: Date;
  /** The repository recorded for a session, if any. */
  repoOf: (box: BoxSummary) => string | undefined;
  /** Whether an owner process runs: undefined when that cannot be told (another host). */
  ownerAlive: (owner: string) => boolean | undefined;
  /** The drydock that adopted a kept session after its own died (the record's adopted_by), if any. */
  adopterOf?: (box: BoxSummary) => string | undefined;
  /**
   * When the session started (the record's created_at), if any: a warm box was made before the
   * session that took it, so the box's own age is not the session's.
   */
  startedOf?: (box: BoxSummary) => string | undefined;
}

export function sessionRow(box: BoxSummary, facts: RowFacts): SessionRow {
  const labels = box.labels;
  const started = facts.startedOf?.(box);
  const created =
    started !== undefined && Number.isFinite(Date.parse(started))
      ? started
      : (labels[LABEL_CREATED] ?? box.createdAt.toISOString());
  const createdMs = Date.parse(created);
  // A kept session adopted by a live drydock is that drydock's now, whatever its label says.
  const adopter = facts.adopterOf?.(box);
  const adopted =
    adopter !== undefined && parseOwner(adopter) !== undefined && facts.ownerAlive(adopter) === true;
  const owner = adopted ? adopter : (labels[LABEL_OWNER] ?? "");
  const alive = parseOwner(owner) ? (facts.ownerAlive(owner) ?? null) : false;
  const repo = facts.repoOf(box) ?? null;
  const pool = labels[LABEL_POOL] !== undefined;
  const evalTask = labels[LABEL_EVAL_TASK] ?? null;
  // An idle warm box (no record, so no repository) is never kept.
  const until = keptUntil(labels);
  const kept = until !== undefined && until > facts.now.getTime() && repo !== null ? until : undefined;
  return {
    session: labels[LABEL_SESSION] ?? "",
    box: box.id.slice(0, 12),
    state: box.state,
    created,
    age_s: Number.isFinite(createdMs) ? Math.max(0, Math.round((facts.now.getTime() - createdMs) / 1000)) : 0,
    repo,
    kind: evalTask !== null ? "eval" : pool && repo === null ? "warm" : "session",
    eval_task: evalTask,
    owner,
    alive,
    orphan: alive === false && kept === undefined,
    kept_until: kept === undefined ? null : new Date(kept).toISOString(),
    pool,
    state_dir: labels[LABEL_STATE] ?? null,
  };
}

/** An age in the largest unit that fits: 42s, 5m, 3h, 2d. */
export function formatAge(seconds: number): string {
  if (seconds < 60) return `${seconds}s`;
  if (seconds < 3600) return `${Math.floor(seconds / 60)}m`;
  if (seconds < 86_400) return `${Math.floor(seconds / 3600)}h`;
  return `${Math.floor(seconds / 86_400)}d`;
}

/** The table's rows, header first, oldest box first. */
export function sessionTableRows(rows: readonly SessionRow[]): string[][] {
  const owner = (value: string) => {
    const parsed = parseOwner(value);
    return parsed ? `${parsed.host}/${parsed.pid}` : "-";
  };
  const what = (r: SessionRow) =>
    r.kind === "warm"
      ? "(warm pool, idle)"
      : r.kind === "eval"
        ? `(eval task ${r.eval_task})`
        : (r.repo ?? "-");
  return [
    ["SESSION", "BOX", "STATE", "AGE", "OWNER", "ALIVE", "REPOSITORY"],
    ...[...rows]
      .sort((a, b) => b.age_s - a.age_s)
      .map((r) => [
        r.session,
        r.box,
        r.state,
        formatAge(r.age_s),
        owner(r.owner),
        r.alive === null
          ? "?"
          : r.alive
            ? "yes"
            : r.kept_until
              ? `no, kept until ${r.kept_until.slice(0, 16).replace("T", " ")}Z`
              : "no",
        what(r),
      ]),
  ];
}
