/**
 * The layout of a results directory (`--out`), and reading and writing it:
 *
 *   run.json                         how the run was started (agent, model, tasks file, problems)
 *   results.json junit.xml report.html
 *   tasks/<id>/                      attempt 1: patch.diff agent.log test_output.txt result.json
 *   tasks/<id>/attempt-<n>/          attempts 2…K, the same files
 *
 * `result.json` is written last and atomically, so an attempt whose result.json exists finished;
 * a run killed mid-attempt leaves none and the attempt runs again on resume.
 */
import { existsSync } from "node:fs";
import { mkdir, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import type { AttemptResult } from "./attempt-result.js";
import type { TaskProblem } from "./task-parse.js";
import { writeFileAtomic } from "../util/write-atomic.js";

export const ATTEMPT_FILES = {
  diff: "patch.diff",
  agentLog: "agent.log",
  testOutput: "test_output.txt",
  result: "result.json",
} as const;

export interface RunInfo {
  schema_version: number;
  /** Names the run in every report (`--run-id`; default: made from the start time); kept on resume. */
  run_id: string;
  drydock_version: string;
  agent: string;
  /** `--agent-version`, else what drydock knows (the aider its own image installs). */
  agent_version?: string;
  model?: string;
  llm?: string;
  command?: string;
  /** Where the patch agent's answers came from (`--patches`): a folder or a predictions file. */
  patches?: { path: string; kind: "dir" | "file"; predictions: number; key?: string };
  /** `--shard K/N`: this run is part K of N of the task file (task_set: a key of the whole file's tasks). */
  shard?: { index: number; count: number; task_set: string };
  /** `--instance-ids`: the tasks of the file this run takes. */
  instance_ids?: string[];
  /** With `--patches`: the instances the predictions answer (SWE-bench's submitted_ids). */
  submitted_ids?: string[];
  /** `eval merge`: the shards this run was put together from. */
  merged_shards?: Array<{ index: number; count: number; dir: string; run_id: string }>;
  tasks_file: string;
  concurrency: number;
  attempts: number;
  default_timeout_s: number;
  /** `--agent-timeout` / `--test-timeout`: limits of their own for tasks that set none. */
  default_agent_timeout_s?: number;
  default_test_timeout_s?: number;
  /** Where the tests ran: a fresh box per attempt (the default), or the agent's (`--grade-in-agent-box`). */
  graded_in?: "fresh box" | "agent box";
  /** `--grading`, when given: every task graded this way (else SWE-bench rows `swebench`, other tasks `strict`). */
  grading?: "swebench" | "strict";
  /** `--integrity`: whether a flagged attempt can count as resolved ("lenient") or not ("strict"). */
  integrity?: "strict" | "lenient";
  image: string;
  /**
   * `--engine`: each engine the run used, with its memory, the attempts placed there (retries
   * included) and, for one that died, why. Absent for a run on the one default engine.
   */
  engines?: Array<{ name: string; memory_mb: number; attempts: number; died?: string }>;
  /**
   * The images the run's attempts ran (see environmentImagesOf): each with the time spent
   * building it and how many attempts ran it. Written when the run ends.
   */
  environment_images?: Array<{ image: string; build_ms: number; attempts: number }>;
  started_at: string;
  finished_at?: string;
  /** True when the run was stopped (Ctrl-C) before every attempt finished. */
  interrupted?: boolean;
  /** Every valid task, in file order, with where it came from. */
  tasks: Array<{ id: string; source: string }>;
  invalid_tasks: TaskProblem[];
}

export interface AttemptTexts {
  diff: string;
  agentLog: string;
  testOutput: string;
}

export function attemptDir(out: string, taskId: string, attempt: number): string {
  return attempt === 1 ? join(out, "tasks", taskId) : join(out, "tasks", taskId, `attempt-${attempt}`);
}

/** Path of an attempt's folder relative to the results directory, with forward slashes. */
export function attemptRelDir(taskId: string, attempt: number): string {
  return attempt === 1 ? `tasks/${taskId}` : `tasks/${taskId}/attempt-${attempt}`;
}

/** Writes an attempt's files, result.json last. */
export async function writeAttempt(out: string, result: AttemptResult, texts: AttemptTexts): Promise<void> {
  const dir = attemptDir(out, result.task_id, result.attempt);
  await mkdir(dir, { recursive: true });
  await rm(join(dir, ATTEMPT_FILES.result), { force: true });
  await Promise.all([
    writeFile(join(dir, ATTEMPT_FILES.diff), texts.diff),
    writeFile(join(dir, ATTEMPT_FILES.agentLog), texts.agentLog),
    writeFile(join(dir, ATTEMPT_FILES.testOutput), texts.testOutput),
  ]);
  await writeFileAtomic(join(dir, ATTEMPT_FILES.result), JSON.stringify(result, null, 2) + "\n");
}

/** Removes an attempt's result so it runs again (a finished result of an older task version). */
export async function forgetAttempt(out: string, taskId: string, attempt: number): Promise<void> {
  await rm(join(attemptDir(out, taskId, attempt), ATTEMPT_FILES.result), { force: true });
}

async function readResult(path: string): Promise<AttemptResult | undefined> {
  try {
    const value = JSON.parse(await readFile(path, "utf8")) as AttemptResult;
    return typeof value.task_id === "string" && typeof value.attempt === "number" ? value : undefined;
  } catch {
    return undefined;
  }
}

/** Every finished attempt in the directory. */
export async function readAttempts(out: string): Promise<AttemptResult[]> {
  const root = join(out, "tasks");
  if (!existsSync(root)) return [];
  const results: AttemptResult[] = [];
  for (const id of (await readdir(root)).sort()) {
    const first = await readResult(join(root, id, ATTEMPT_FILES.result));
    if (first) results.push(first);
    let entries: string[] = [];
    try {
      entries = await readdir(join(root, id));
    } catch {
      continue;
    }
    for (const entry of entries.filter((e) => /^attempt-\d+$/.test(e))) {
      const more = await readResult(join(root, id, entry, ATTEMPT_FILES.result));
      if (more) results.push(more);
    }
  }
  return results.sort((a, b) =>
    a.task_id === b.task_id ? a.attempt - b.attempt : a.task_id < b.task_id ? -1 : 1,
  );
}

/** An attempt's texts, each cut to `maxChars` (the full files stay in the folder). */
export async function readAttemptTexts(
  out: string,
  taskId: string,
  attempt: number,
  maxChars = Infinity,
): Promise<AttemptTexts> {
  const dir = attemptDir(out, taskId, attempt);
  const read = async (name: string) => {
    try {
      const text = await readFile(join(dir, name), "utf8");
      return text.length > maxChars
        ? `${text.slice(0, maxChars)}\n… (${text.length - maxChars} more characters in ${name})\n`
        : text;
    } catch {
      return "";
    }
  };
  const [diff, agentLog, testOutput] = await Promise.all([
    read(ATTEMPT_FILES.diff),
    read(ATTEMPT_FILES.agentLog),
    read(ATTEMPT_FILES.testOutput),
  ]);
  return { diff, agentLog, testOutput };
}

export async function readRunInfo(out: string): Promise<RunInfo | undefined> {
  try {
    const info = JSON.parse(await readFile(join(out, "run.json"), "utf8")) as RunInfo;
    // Runs written before run ids existed are named by their start time.
    info.run_id ??= `${info.started_at ?? "unknown"}`.replace(/[^0-9A-Za-z]/g, "").slice(0, 15);
    return info;
  } catch {
    return undefined;
  }
}

export async function writeRunInfo(out: string, info: RunInfo): Promise<void> {
  await mkdir(out, { recursive: true });
  await writeFileAtomic(join(out, "run.json"), JSON.stringify(info, null, 2) + "\n");
}

export async function writeReportFile(out: string, name: string, text: string): Promise<void> {
  await writeFileAtomic(join(out, name), text);
}
