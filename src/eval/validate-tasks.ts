/**
 * `drydock eval validate TASKS`: checks that each task can grade anything, as SWE-bench's
 * validation does. Every task runs twice with the patch agent: with no patch (the base commit plus
 * the test patch), where each FAIL_TO_PASS test must fail and each PASS_TO_PASS test pass; and with
 * its gold patch, where every named test must pass. A task graded by exit code must fail without
 * the fix and pass with it. A task that does not is invalid, with the reason, never silently graded.
 */
import { join } from "node:path";
import type { AttemptResult } from "./attempt-result.js";
import type { EvalOptions } from "./eval-run.js";
import { runEvalCommand } from "./eval-run.js";
import type { Predictions } from "./predictions.js";
import { writeReportFile } from "./results-dir.js";
import type { ResultsFile } from "./results-summary.js";
import { standingAttempt } from "./swebench-report.js";

export interface TaskValidity {
  id: string;
  valid: boolean;
  /** Why not, one line each. */
  problems: string[];
  base_status?: string;
  gold_status?: string;
}

export interface Validation {
  tasks: TaskValidity[];
  valid: number;
  invalid: number;
  /** The two runs' results directories. */
  base_out: string;
  gold_out: string;
}

/** Every task's answer is the empty patch: the tests run on the task's tree. */
const NO_PATCH: Predictions = {
  kind: "file",
  path: "(no patch: the base commit)",
  count: 0,
  ids: [],
  key: "none",
  get: async () => ({ patch: "", source: "no patch (the base commit)" }),
};

const list = (names: string[]) =>
  names.length > 3 ? `${names.slice(0, 3).join(", ")} and ${names.length - 3} more` : names.join(", ");

/** What one task's two runs say about it. Pure. */
export function judgeTask(
  id: string,
  base: AttemptResult | undefined,
  gold: AttemptResult | undefined,
): TaskValidity {
  const problems: string[] = [];
  const ran = (a: AttemptResult | undefined, what: string) => {
    if (!a) {
      problems.push(`${what}: did not run`);
      return false;
    }
    if (a.status !== "resolved" && a.status !== "unresolved") {
      problems.push(`${what}: ${a.status}${a.error ? ` (${a.error})` : ""}`);
      return false;
    }
    return true;
  };
  if (ran(base, "without a fix")) {
    const grade = base!.tests?.grade;
    if (grade?.by === "test_names") {
      const f2pPassing = grade.fail_to_pass?.passed ?? [];
      if (f2pPassing.length > 0) {
        problems.push(`FAIL_TO_PASS already pass without a fix: ${list(f2pPassing)}`);
      }
      const p2pFailing = [...(grade.pass_to_pass?.failed ?? []), ...(grade.pass_to_pass?.missing ?? [])];
      if (p2pFailing.length > 0) problems.push(`PASS_TO_PASS do not pass without a fix: ${list(p2pFailing)}`);
      if (base!.resolved && f2pPassing.length === 0) {
        problems.push("resolved without a fix (no FAIL_TO_PASS test to fail): the task grades nothing");
      }
    } else if (base!.resolved) {
      problems.push("test_cmd already exits 0 without a fix: the task grades nothing");
    }
  }
  if (ran(gold, "with the gold patch") && !gold!.resolved) {
    const grade = gold!.tests?.grade;
    const failing = [
      ...(grade?.fail_to_pass?.failed ?? []),
      ...(grade?.fail_to_pass?.missing ?? []),
      ...(grade?.pass_to_pass?.failed ?? []),
      ...(grade?.pass_to_pass?.missing ?? []),
    ];
    const flagged = gold!.integrity?.reason;
    problems.push(
      failing.length > 0
        ? `with the gold patch these do not pass: ${list(failing)}`
        : flagged
          ? // Strict grading holds a runner file the gold patch changes against it: the task should name it editable.
            `with the gold patch: flagged: ${flagged} (name them in editable_files if the fix must change them)`
          : `with the gold patch: ${grade?.reason ?? "unresolved"}`,
    );
  }
  return {
    id,
    valid: problems.length === 0,
    problems,
    ...(base ? { base_status: base.status } : {}),
    ...(gold ? { gold_status: gold.status } : {}),
  };
}

export function judgeRuns(
  base: ResultsFile,
  gold: ResultsFile,
  outs: { base: string; gold: string },
): Validation {
  const goldById = new Map(gold.tasks.map((t) => [t.id, t]));
  const tasks = base.tasks.map((t) => {
    const g = goldById.get(t.id);
    return judgeTask(t.id, standingAttempt(t), g ? standingAttempt(g) : undefined);
  });
  const valid = tasks.filter((t) => t.valid).length;
  return { tasks, valid, invalid: tasks.length - valid, base_out: outs.base, gold_out: outs.gold };
}

export type ValidateOptions = Omit<EvalOptions, "agent" | "agentCommand" | "patches" | "attempts"> & {
  onStage?: (stage: "base" | "gold") => void;
};

/** Runs both passes into `<out>/base` and `<out>/gold` (each resumable) and writes `<out>/validation.json`. */
export async function validateTasks(
  options: ValidateOptions,
): Promise<Validation & { invalidTasks: number }> {
  const outs = { base: join(options.out, "base"), gold: join(options.out, "gold") };
  options.onStage?.("base");
  const base = await runEvalCommand({
    ...options,
    agent: "patch",
    patches: NO_PATCH,
    // The run without a fix must run the tests, whatever SWE-bench does with empty answers.
    gradeEmptyAnswers: true,
    attempts: 1,
    out: outs.base,
  });
  if (options.signal.aborted) throw new Error("stopped");
  options.onStage?.("gold");
  const gold = await runEvalCommand({ ...options, agent: "patch", attempts: 1, out: outs.gold });
  const validation = judgeRuns(base.results, gold.results, outs);
  // Tasks graded by exit code have no names to check; say so in the file for the reader.
  const named = base.results.tasks.length
    ? base.results.tasks.filter((t) => {
        const a = t.attempts[0];
        return a?.tests?.grade?.by === "test_names";
      }).length
    : 0;
  await writeReportFile(
    options.out,
    "validation.json",
    JSON.stringify({ ...validation, graded_by_test_names: named }, null, 2) + "\n",
  );
  return { ...validation, invalidTasks: base.invalidTasks };
}
