/**
 * `drydock sessions show ID`: one session at a glance, from its box's labels, its record, its audit
 * log and its task stack. `sessionFacts` gathers; `renderSessionFacts` is pure.
 */
import { hostname } from "node:os";
import { LABEL_OWNER, ownerIsDead, parseOwner } from "../engine/labels.js";
import type { AuditEntry } from "../session/audit-entry.js";
import { auditCalls } from "../session/audit-calls.js";
import { readAuditLog } from "../session/audit-log.js";
import type { SessionRecord } from "../session/session-record.js";
import { taskStackFacts, type TaskStackFacts } from "../tasks/task-stack-facts.js";
import { TaskStackStore } from "../tasks/task-stack-store.js";
import { formatAuditEntry } from "./audit-lines.js";
import type { SessionTarget } from "./session-target.js";
import { terminalLine, terminalText } from "../util/terminal-text.js";

/** How many of the last commands `show` lists. */
export const LAST_COMMANDS = 10;

export interface SessionFacts {
  session_id: string;
  box: { id: string; state: string } | null;
  owner: string | null;
  /** Whether the process that made the box runs; null when that cannot be told (another host). */
  owner_alive: boolean | null;
  record: SessionRecord | null;
  audit_log: string;
  calls: number;
  cost: { llm_requests: number; refused: number; input_tokens: number; output_tokens: number; usd: number };
  last_commands: AuditEntry[];
  task_stack: TaskStackFacts | null;
  task_stack_problem?: string;
}

export async function sessionFacts(target: SessionTarget, tasksDir?: string): Promise<SessionFacts> {
  const entries = auditCalls((await readAuditLog(target.logPath)).entries);
  const labelled = parseOwner(target.box?.labels[LABEL_OWNER]);
  // A kept session adopted by a live drydock is that drydock's now, whatever its label says.
  const adopter = parseOwner(target.record?.adopted_by);
  const adopterAlive = adopter !== undefined && adopter.host === hostname() && !ownerIsDead(adopter);
  const owner = adopterAlive ? adopter : labelled;
  const facts: SessionFacts = {
    session_id: target.id,
    box: target.box ? { id: target.box.id.slice(0, 12), state: target.box.state } : null,
    owner: owner ? `${owner.host}/${owner.pid}` : null,
    owner_alive: owner ? (owner.host === hostname() ? !ownerIsDead(owner) : null) : null,
    record: target.record ?? null,
    audit_log: target.logPath,
    ...auditSummary(entries),
    task_stack: null,
  };
  Object.assign(facts, await taskStackFacts(new TaskStackStore({ dir: tasksDir }), target.id));
  return facts;
}

/** Calls, model cost and the last commands (the agent's and a person's), from a log. */
export function auditSummary(
  entries: readonly AuditEntry[],
): Pick<SessionFacts, "calls" | "cost" | "last_commands"> {
  const finished = entries.filter((e) => !e.outcome?.running);
  const cost = { llm_requests: 0, refused: 0, input_tokens: 0, output_tokens: 0, usd: 0 };
  for (const e of finished) {
    if (e.tool !== "llm_request") continue;
    if (e.outcome.refused) {
      cost.refused++;
      continue;
    }
    const tokens = e.outcome.tokens as { input?: number; output?: number } | undefined;
    cost.llm_requests++;
    cost.input_tokens += tokens?.input ?? 0;
    cost.output_tokens += tokens?.output ?? 0;
    cost.usd += typeof e.outcome.cost_usd === "number" ? e.outcome.cost_usd : 0;
  }
  return {
    calls: finished.filter((e) => e.actor !== "drydock" && e.tool !== "llm_request").length,
    cost,
    last_commands: finished
      .filter((e) => e.tool === "bash" || e.tool === "person_command")
      .slice(-LAST_COMMANDS),
  };
}

export function renderSessionFacts(f: SessionFacts): string {
  const r = f.record;
  const lines = [`session ${f.session_id}`];
  // Values come from the record, the task stack and the log, all of which the agent could shape.
  const row = (label: string, value: string) => lines.push(`  ${label.padEnd(12)} ${terminalLine(value)}`);
  row("box", f.box ? `${f.box.id} (${f.box.state})` : "gone (removed with its session)");
  row(
    "owner",
    f.owner ? `${f.owner} (${f.owner_alive === null ? "alive?" : f.owner_alive ? "alive" : "gone"})` : "-",
  );
  row("repository", r?.repo ?? "(not recorded)");
  if (r?.created_at) row("created", r.created_at);
  if (r?.base_commit)
    row(
      "base",
      `${r.base_commit}${r.host_base_commit && r.host_base_commit !== r.base_commit ? ` (host ${r.host_base_commit})` : ""}`,
    );
  row("image", r?.image ?? "(not recorded)");
  if (r?.limits) {
    const l = r.limits;
    row(
      "limits",
      `memory ${l.memoryMB} MiB, cpus ${l.cpus}, pids ${l.pidsLimit}, /workspace ${l.workspaceMB} MiB, /tmp ${l.tmpMB} MiB, command ${l.command_timeout_s}s, output ${l.max_output_bytes} B`,
    );
    row("network", `${l.network}${r.egress?.length ? `; egress to ${r.egress.join(", ")}` : "; no egress"}`);
  }
  const c = f.cost;
  row(
    "model cost",
    c.llm_requests || c.refused
      ? `$${c.usd.toFixed(4)}: ${c.llm_requests} request(s), ${c.input_tokens}+${c.output_tokens} tokens${c.refused ? `, ${c.refused} refused` : ""}`
      : "none (no model requests)",
  );
  row("audit log", `${f.audit_log} (${f.calls} call(s))`);
  lines.push("", "task stack:");
  if (f.task_stack_problem) lines.push(`  warning: ${terminalLine(f.task_stack_problem)}`);
  if (f.task_stack) {
    const t = f.task_stack;
    lines.push(
      `  ${t.tasks} task(s), ${t.open} open${t.current ? `; current: ${terminalLine(t.current)}` : ""}`,
    );
    lines.push(
      ...t.outline
        .trimEnd()
        .split("\n")
        .map((l) => `  ${terminalLine(l)}`),
    );
  } else if (!f.task_stack_problem) {
    lines.push("  (none)");
  }
  lines.push("", `last commands (up to ${LAST_COMMANDS}):`);
  if (f.last_commands.length === 0) lines.push("  (none)");
  lines.push(...f.last_commands.map((e) => `  ${formatAuditEntry(e)}`));
  return terminalText(lines.join("\n")) + "\n";
}
