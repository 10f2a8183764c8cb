import type { AttemptResult, AttemptStatus } from "../../../src/eval/attempt-result.js";
import type { RunInfo } from "../../../src/eval/results-dir.js";

export function attempt(
  taskId: string,
  status: AttemptStatus,
  extra: Partial<AttemptResult> = {},
): AttemptResult {
  return {
    schema_version: 1,
    task_id: taskId,
    attempt: 1,
    status,
    resolved: status === "resolved",
    agent: "patch",
    task_hash: "h",
    started_at: "2026-01-01T00:00:00.000Z",
    finished_at: "2026-01-01T00:00:02.000Z",
    duration_ms: 2000,
    timings_ms: { start: 500, setup: 0, agent: 1000, tests: 500 },
    tokens: { input: 100, output: 10 },
    cost_usd: 0.01,
    llm_requests: 1,
    diff_stat: { files: 1, insertions: 2, deletions: 1 },
    ...extra,
  };
}

export function runInfo(ids: string[], extra: Partial<RunInfo> = {}): RunInfo {
  return {
    schema_version: 1,
    run_id: "20260101-000000-ab12",
    drydock_version: "0.1.0",
    agent: "patch",
    tasks_file: "/w/tasks.jsonl",
    concurrency: 2,
    attempts: 1,
    default_timeout_s: 1800,
    image: "drydock-sandbox:test",
    started_at: "2026-01-01T00:00:00.000Z",
    finished_at: "2026-01-01T00:01:00.000Z",
    tasks: ids.map((id, i) => ({ id, source: `tasks.jsonl:${i + 1}` })),
    invalid_tasks: [],
    ...extra,
  };
}
