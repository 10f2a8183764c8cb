import { describe, expect, it } from "vitest";
import { checkInstanceIds, onlyTasks, parseInstanceIds } from "../../../src/eval/instance-ids.js";
import { buildResults } from "../../../src/eval/results-summary.js";
import { attempt, runInfo } from "./fixtures.js";

describe("--instance-ids", () => {
  it("takes ids space- or comma-separated, once or repeated, each once", () => {
    expect(parseInstanceIds(["a,b", "c", " b d "])).toEqual(["a", "b", "c", "d"]);
    expect(parseInstanceIds(undefined)).toBeUndefined();
    expect(() => parseInstanceIds([" , "])).toThrow(/--instance-ids: holds no id/);
  });

  it("names every id no task has", () => {
    expect(() => checkInstanceIds(["a", "x", "y"], ["a", "b"], "tasks.jsonl")).toThrow(
      "--instance-ids: no tasks have the ids x, y in tasks.jsonl; check the spelling against the task file's ids (a SWE-bench row's instance_id)",
    );
    expect(() => checkInstanceIds(["x"], ["a"], "tasks.jsonl")).toThrow(
      /no task has the id x in tasks\.jsonl/,
    );
    expect(() => checkInstanceIds(["a"], ["a"], "tasks.jsonl")).not.toThrow();
  });

  it("keeps the results of the tasks asked for, summed up again", () => {
    const results = buildResults(runInfo(["a", "b", "c"]), [
      attempt("a", "resolved"),
      attempt("b", "unresolved"),
      attempt("c", "resolved"),
    ]);
    const only = onlyTasks(results, ["b", "c"]);
    expect(only.tasks.map((t) => t.id)).toEqual(["b", "c"]);
    expect(only.summary).toMatchObject({ tasks: 2, resolved: 1, resolved_rate: 0.5 });
  });
});
