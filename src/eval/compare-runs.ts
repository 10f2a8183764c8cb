/**
 * Which tasks changed outcome between two runs: fixed (now resolved), broken (no longer
 * resolved), a different failure, and tasks only one run has. Pure.
 */
import type { ResultsFile, TaskStatus } from "./results-summary.js";

export interface TaskChange {
  id: string;
  before: TaskStatus;
  after: TaskStatus;
}

/** Which run a side is: its id, agent, agent version and model. */
export interface RunIdentity {
  run_id: string;
  agent: string;
  agent_version?: string;
  model?: string;
}

export interface RunComparison {
  fixed: TaskChange[];
  broken: TaskChange[];
  /** Unresolved both times, but not the same way (unresolved → timeout …). */
  changed: TaskChange[];
  same: number;
  only_before: string[];
  /** Tasks resolved in A that B does not have at all: a regression too (a task that broke B's file, a shard left out). */
  resolved_only_before: string[];
  only_after: string[];
  before: { resolved: number; tasks: number; resolved_rate: number; run: RunIdentity };
  after: { resolved: number; tasks: number; resolved_rate: number; run: RunIdentity };
}

export function compareRuns(before: ResultsFile, after: ResultsFile): RunComparison {
  const a = new Map(before.tasks.map((t) => [t.id, t]));
  const b = new Map(after.tasks.map((t) => [t.id, t]));
  const out: RunComparison = {
    fixed: [],
    broken: [],
    changed: [],
    same: 0,
    only_before: [...a.keys()].filter((id) => !b.has(id)).sort(),
    resolved_only_before: [...a.values()]
      .filter((t) => t.resolved && !b.has(t.id))
      .map((t) => t.id)
      .sort(),
    only_after: [...b.keys()].filter((id) => !a.has(id)).sort(),
    before: pick(before),
    after: pick(after),
  };
  for (const [id, x] of [...a].sort(([p], [q]) => (p < q ? -1 : 1))) {
    const y = b.get(id);
    if (!y) continue;
    const change = { id, before: x.status, after: y.status };
    if (!x.resolved && y.resolved) out.fixed.push(change);
    else if (x.resolved && !y.resolved) out.broken.push(change);
    else if (x.status !== y.status) out.changed.push(change);
    else out.same++;
  }
  return out;
}

function pick(r: ResultsFile) {
  const run: RunIdentity = {
    run_id: r.run.run_id,
    agent: r.run.agent,
    ...(r.run.agent_version ? { agent_version: r.run.agent_version } : {}),
    ...(r.run.model ? { model: r.run.model } : {}),
  };
  return {
    resolved: r.summary.resolved,
    tasks: r.summary.tasks,
    resolved_rate: r.summary.resolved_rate,
    run,
  };
}

function identity(x: RunIdentity): string {
  const agent = `${x.agent}${x.agent_version ? ` ${x.agent_version}` : ""}${x.model ? `, ${x.model}` : ""}`;
  return `run ${x.run_id} (${agent})`;
}

/** The comparison as lines for a terminal. */
export function formatComparison(c: RunComparison, names: { before: string; after: string }): string {
  const rate = (x: RunComparison["before"]) =>
    `${x.resolved}/${x.tasks} resolved (${(x.resolved_rate * 100).toFixed(1)}%)`;
  const lines = [
    `A ${names.before}: ${identity(c.before.run)}: ${rate(c.before)}`,
    `B ${names.after}: ${identity(c.after.run)}: ${rate(c.after)}`,
    "",
  ];
  const section = (title: string, list: TaskChange[]) => {
    if (list.length === 0) return;
    lines.push(`${title} (${list.length}):`);
    for (const t of list) lines.push(`  ${t.id}  ${t.before} → ${t.after}`);
  };
  section("fixed in B", c.fixed);
  section("broken in B", c.broken);
  section("failing differently", c.changed);
  if (c.only_before.length) lines.push(`only in A (${c.only_before.length}): ${c.only_before.join(", ")}`);
  if (c.only_after.length) lines.push(`only in B (${c.only_after.length}): ${c.only_after.join(", ")}`);
  if (c.resolved_only_before.length)
    lines.push(
      `resolved in A, missing from B (${c.resolved_only_before.length}): ${c.resolved_only_before.join(", ")}`,
    );
  lines.push(`unchanged: ${c.same}`);
  return lines.join("\n") + "\n";
}

/** Whether B lost anything A resolved: a task broken, or a resolved task missing from B. */
export function isRegression(c: RunComparison): boolean {
  return c.broken.length > 0 || c.resolved_only_before.length > 0;
}
