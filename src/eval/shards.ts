/**
 * Shards: `eval TASKS --shard K/N` runs every N-th task of the file (its K-th share, in file
 * order), so N CI jobs split a task set deterministically; `eval merge DIR... --out DIR` puts the
 * shards' results together into one run, refusing shards of another task file or other settings.
 */
import { createHash } from "node:crypto";
import { cp, mkdir, readdir } from "node:fs/promises";
import { join } from "node:path";
import { InvalidArgumentError } from "../util/errors.js";
import { readRunInfo, writeRunInfo, type RunInfo } from "./results-dir.js";

export interface Shard {
  /** 1-based. */
  index: number;
  count: number;
}

/** Parses "K/N" (1 ≤ K ≤ N). */
export function parseShard(text: string, flag = "--shard"): Shard {
  const m = /^(\d+)\/(\d+)$/.exec(text.trim());
  const index = m ? Number(m[1]) : NaN;
  const count = m ? Number(m[2]) : NaN;
  if (!m || count < 1 || index < 1 || index > count || count > 10_000) {
    throw new InvalidArgumentError(
      flag,
      `${JSON.stringify(text)} is not K/N with 1 ≤ K ≤ N; write e.g. ${flag} 2/4 for the second of four parts`,
    );
  }
  return { index, count };
}

/** The shard's tasks: those at file positions K-1, K-1+N, K-1+2N, … */
export function shardOf<T>(tasks: readonly T[], shard: Shard): T[] {
  return tasks.filter((_, i) => i % shard.count === shard.index - 1);
}

/** A key of a task list's content (ids and task hashes, in order): shards must share it. */
export function taskSetKey(tasks: ReadonlyArray<{ id: string; hash: string }>): string {
  const hash = createHash("sha256");
  for (const t of tasks) hash.update(t.id).update("\0").update(t.hash).update("\n");
  return hash.digest("hex").slice(0, 16);
}

/** What every shard of one run must have run with. */
/**
 * The settings two runs differ in (of those that change what an attempt does), each as
 * "key A vs B"; `ignore` leaves some out. Pure.
 */
export function settingsDiffer(a: RunInfo, b: RunInfo, ignore: string[] = []): string[] {
  const x = settings(a);
  const y = settings(b);
  return Object.keys(x)
    .filter((key) => !ignore.includes(key) && JSON.stringify(x[key]) !== JSON.stringify(y[key]))
    .map((key) => `${key} ${JSON.stringify(x[key]) ?? "unset"} vs ${JSON.stringify(y[key]) ?? "unset"}`);
}

function settings(run: RunInfo): Record<string, unknown> {
  return {
    agent: run.agent,
    agent_version: run.agent_version,
    model: run.model,
    llm: run.llm,
    command: run.command,
    patches: run.patches ? { kind: run.patches.kind, key: run.patches.key } : undefined,
    attempts: run.attempts,
    default_timeout_s: run.default_timeout_s,
    default_agent_timeout_s: run.default_agent_timeout_s,
    default_test_timeout_s: run.default_test_timeout_s,
    graded_in: run.graded_in,
    integrity: run.integrity ?? "strict",
    grading: run.grading,
    image: run.image,
  };
}

export interface MergeResult {
  run: RunInfo;
  shards: number;
  /** Shards of the split that were not given (their tasks count as not run). */
  missing: number[];
}

/** Merges shard result directories into `out` (task folders copied, run.json written). */
export async function mergeShards(
  dirs: string[],
  out: string,
  options: { allowMissing?: boolean } = {},
): Promise<MergeResult> {
  if (dirs.length === 0) throw new InvalidArgumentError("DIR", "give the results directories of the shards");
  const runs: Array<{ dir: string; run: RunInfo }> = [];
  for (const dir of dirs) {
    const run = await readRunInfo(dir);
    if (!run) {
      throw new InvalidArgumentError(
        "DIR",
        `${dir} holds no run.json; give the --out directories of the shards`,
      );
    }
    if (!run.shard) {
      throw new InvalidArgumentError(
        "DIR",
        `${dir} is not a shard (it ran without --shard); merge only shards of one run`,
      );
    }
    runs.push({ dir, run });
  }
  const first = runs[0]!;
  const count = first.run.shard!.count;
  const seen = new Map<number, string>();
  for (const { dir, run } of runs) {
    const shard = run.shard!;
    const where = `${dir} (shard ${shard.index}/${shard.count})`;
    if (shard.count !== count) {
      throw new InvalidArgumentError(
        "DIR",
        `${where} splits the tasks into ${shard.count}, ${first.dir} into ${count}`,
      );
    }
    if (shard.task_set !== first.run.shard!.task_set) {
      throw new InvalidArgumentError(
        "DIR",
        `${where} ran another task file (or the tasks changed) than ${first.dir}: tasks ${shard.task_set} vs ${first.run.shard!.task_set}`,
      );
    }
    const a = settings(run);
    const b = settings(first.run);
    for (const key of Object.keys(a)) {
      if (JSON.stringify(a[key]) !== JSON.stringify(b[key])) {
        throw new InvalidArgumentError(
          "DIR",
          `${where} ran with ${key} ${JSON.stringify(a[key]) ?? "unset"}, ${first.dir} with ${JSON.stringify(b[key]) ?? "unset"}; merge only shards of one run`,
        );
      }
    }
    if (seen.has(shard.index)) {
      throw new InvalidArgumentError("DIR", `${where} and ${seen.get(shard.index)} are the same shard`);
    }
    seen.set(shard.index, dir);
  }
  const missing = Array.from({ length: count }, (_, i) => i + 1).filter((k) => !seen.has(k));
  if (missing.length > 0 && !options.allowMissing) {
    throw new InvalidArgumentError(
      "DIR",
      `shard(s) ${missing.join(", ")} of ${count} not given; give every shard's directory, or --allow-missing to merge only these`,
    );
  }
  // File order again: shard K's j-th task was the file's task j·N + K − 1.
  const byIndex = new Map<number, { id: string; source: string }>();
  for (const { run } of runs) {
    run.tasks.forEach((t, j) => byIndex.set(j * count + run.shard!.index - 1, t));
  }
  const tasks = [...byIndex.entries()].sort(([a], [b]) => a - b).map(([, t]) => t);
  await mkdir(join(out, "tasks"), { recursive: true });
  for (const { dir, run } of runs) {
    const have = new Set(await readdir(join(dir, "tasks")).catch(() => [] as string[]));
    for (const t of run.tasks) {
      if (!have.has(t.id)) continue;
      await cp(join(dir, "tasks", t.id), join(out, "tasks", t.id), { recursive: true, force: true });
    }
  }
  const started = runs.map((r) => r.run.started_at).sort()[0]!;
  const finishedAll = runs.every((r) => r.run.finished_at);
  const finished = runs
    .map((r) => r.run.finished_at ?? "")
    .sort()
    .at(-1);
  const invalid = new Map<string, RunInfo["invalid_tasks"][number]>();
  for (const { run } of runs) for (const p of run.invalid_tasks) invalid.set(JSON.stringify(p), p);
  const merged: RunInfo = {
    ...first.run,
    concurrency: runs.reduce((sum, r) => sum + r.run.concurrency, 0),
    started_at: started,
    ...(finishedAll && finished ? { finished_at: finished } : { finished_at: undefined }),
    interrupted: runs.some((r) => r.run.interrupted) || undefined,
    tasks,
    invalid_tasks: [...invalid.values()],
    ...(runs.some((r) => r.run.submitted_ids)
      ? { submitted_ids: [...new Set(runs.flatMap((r) => r.run.submitted_ids ?? []))].sort() }
      : {}),
    ...(runs.some((r) => r.run.environment_images)
      ? { environment_images: mergedImages(runs.map((r) => r.run.environment_images ?? [])) }
      : {}),
    shard: undefined,
    merged_shards: runs
      .map((r) => ({ index: r.run.shard!.index, count, dir: r.dir, run_id: r.run.run_id }))
      .sort((a, b) => a.index - b.index),
  };
  await writeRunInfo(out, merged);
  return { run: merged, shards: runs.length, missing };
}

/** Each image the shards ran, with their build times and attempts added up. */
function mergedImages(
  lists: Array<NonNullable<RunInfo["environment_images"]>>,
): RunInfo["environment_images"] {
  const byImage = new Map<string, { image: string; build_ms: number; attempts: number }>();
  for (const entry of lists.flat()) {
    const sum = byImage.get(entry.image) ?? { image: entry.image, build_ms: 0, attempts: 0 };
    sum.build_ms += entry.build_ms;
    sum.attempts += entry.attempts;
    byImage.set(entry.image, sum);
  }
  return [...byImage.values()];
}
