/**
 * `--instance-ids` (and its alias `--task`): the tasks of a run to take, by id, as SWE-bench's
 * harness takes `--instance_ids`. Ids may be given space- or comma-separated, once or repeated; an
 * id that names no task is an error naming it, never an empty run. Pure.
 */
import { InvalidArgumentError } from "../util/errors.js";
import { buildResults, type ResultsFile } from "./results-summary.js";

/** The ids given (split at commas and white space, each once, in order), or undefined for none. */
export function parseInstanceIds(values: readonly string[] | undefined): string[] | undefined {
  if (!values || values.length === 0) return undefined;
  const ids = [...new Set(values.flatMap((v) => v.split(/[\s,]+/)).filter((id) => id !== ""))];
  if (ids.length === 0) {
    throw new InvalidArgumentError(
      "--instance-ids",
      "holds no id; give task ids, e.g. --instance-ids six-1 six-2",
    );
  }
  return ids;
}

/** Throws naming the ids `known` does not hold; `where` says what was searched. */
export function checkInstanceIds(ids: readonly string[], known: Iterable<string>, where: string): void {
  const have = new Set(known);
  const unknown = ids.filter((id) => !have.has(id));
  if (unknown.length > 0) {
    const shown =
      unknown.slice(0, 10).join(", ") + (unknown.length > 10 ? `, … (${unknown.length} in all)` : "");
    throw new InvalidArgumentError(
      "--instance-ids",
      `${unknown.length === 1 ? "no task has the id" : "no tasks have the ids"} ${shown} in ${where}; check the spelling against the task file's ids (a SWE-bench row's instance_id)`,
    );
  }
}

/** The results of the given tasks only, summed up again. */
export function onlyTasks(results: ResultsFile, ids: readonly string[]): ResultsFile {
  const keep = new Set(ids);
  const run = {
    ...results.run,
    tasks: results.run.tasks.filter((t) => keep.has(t.id)),
    invalid_tasks: results.run.invalid_tasks.filter((p) => p.id !== undefined && keep.has(p.id)),
  };
  return buildResults(
    run,
    results.tasks.filter((t) => keep.has(t.id)).flatMap((t) => t.attempts),
  );
}
