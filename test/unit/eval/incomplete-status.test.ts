/* eslint-disable @typescript-eslint/no-explicit-any */
/**
 * An instance with no prediction has one status everywhere: `incomplete`, as SWE-bench's
 * make_run_report counts it (not an error), in results.json, junit.xml, report.html and
 * swebench-report.json.
 */
import { XMLParser } from "fast-xml-parser";
import { describe, expect, it } from "vitest";
import { htmlReport } from "../../../src/eval/html-report.js";
import { junitXml } from "../../../src/eval/junit-report.js";
import { buildResults } from "../../../src/eval/results-summary.js";
import { swebenchInstanceReport, swebenchRunReport } from "../../../src/eval/swebench-report.js";
import { attempt, runInfo } from "./fixtures.js";

const results = buildResults(runInfo(["answered", "unanswered"], { model: "m" }), [
  attempt("answered", "resolved", {
    grading: "swebench",
    prediction: "given",
    tests: {
      exit_code: 0,
      timed_out: false,
      grade: { resolved: true, by: "exit_code", reason: "test_cmd exited 0" },
    },
  }),
  attempt("unanswered", "incomplete", {
    grading: "swebench",
    prediction: "missing",
    error: "no prediction: preds.jsonl has no instance_id unanswered",
    phase: "start",
    duration_ms: 0,
  }),
]);

describe("a task with no prediction", () => {
  it("is incomplete in results.json, counted apart from errors", () => {
    expect(results.tasks.map((t) => t.status)).toEqual(["resolved", "incomplete"]);
    expect(results.summary.statuses).toMatchObject({ incomplete: 1, error: 0 });
  });

  it("is incomplete in swebench-report.json and has no report.json, as in SWE-bench", () => {
    const report = swebenchRunReport(results);
    expect(report).toMatchObject({
      incomplete_ids: ["unanswered"],
      error_ids: [],
      submitted_ids: ["answered"],
      submitted_instances: 1,
    });
    expect(swebenchInstanceReport(results.tasks[1]!)).toBeUndefined();
  });

  it("is a skipped testcase in junit.xml that says incomplete, not an error", () => {
    const doc = new XMLParser({ ignoreAttributes: false, attributeNamePrefix: "" }).parse(junitXml(results));
    expect(doc.testsuites).toMatchObject({ errors: "0", skipped: "1" });
    const suite = (doc.testsuites.testsuite as Array<Record<string, any>>).find(
      (s) => s.name === "unanswered",
    )!;
    expect(String(suite.testcase.skipped.message)).toBe(
      "incomplete: no prediction: preds.jsonl has no instance_id unanswered",
    );
  });

  it("has the incomplete badge's style in report.html, whose data says incomplete", () => {
    const html = htmlReport(results, {});
    expect(html).toContain(".badge.incomplete");
    const data = JSON.parse(
      /<script type="application\/json" id="eval-data">(.*?)<\/script>/s.exec(html)![1]!,
    );
    expect(data.results.tasks[1].status).toBe("incomplete");
  });
});
