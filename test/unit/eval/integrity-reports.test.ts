/* eslint-disable @typescript-eslint/no-explicit-any */
import { XMLParser, XMLValidator } from "fast-xml-parser";
import { describe, expect, it } from "vitest";
import { summaryLine } from "../../../src/cli/eval-results-commands.js";
import { REPORT_SCRIPT } from "../../../src/eval/html-report-script.js";
import { junitXml } from "../../../src/eval/junit-report.js";
import { buildResults } from "../../../src/eval/results-summary.js";
import { swebenchRunReport } from "../../../src/eval/swebench-report.js";
import { attempt, runInfo } from "./fixtures.js";

const REASON =
  "the agent changed the test runner's files (conftest.py\u001b[2J); they were put back before the tests";

/** A task whose named test passed, but whose attempt was flagged and so not resolved. */
const results = buildResults(runInfo(["flagged", "clean"]), [
  attempt("flagged", "unresolved", {
    resolved: false,
    tests: {
      exit_code: 0,
      timed_out: false,
      grade: {
        resolved: true,
        by: "test_names",
        reason: "FAIL_TO_PASS 1/1 pass",
        fail_to_pass: { passed: ["test_add"], failed: [], missing: [] },
      },
    },
    integrity: {
      test_files_restored: [],
      outside_editable_files: ["conftest.py"],
      runner_files_restored: ["conftest.py"],
      flags: ["runner_files_restored"],
      reason: REASON,
    },
  }),
  attempt("clean", "resolved"),
]);

describe("integrity flags in the reports", () => {
  it("are counted in results.json, per task and in the summary", () => {
    expect(results.tasks.map((t) => t.integrity_flags)).toEqual([["runner_files_restored"], undefined]);
    expect(results.summary.integrity_flagged).toBe(1);
  });

  it("are a property of each testcase in junit.xml, and a failure when the tests passed", () => {
    const xml = junitXml(results);
    expect(XMLValidator.validate(xml)).toBe(true);
    const doc = new XMLParser({ ignoreAttributes: false, attributeNamePrefix: "" }).parse(xml);
    const suite = (doc.testsuites.testsuite as Array<Record<string, any>>).find((s) => s.name === "flagged")!;
    expect(suite).toMatchObject({ tests: "2", failures: "1" });
    const cases = suite.testcase as Array<Record<string, any>>;
    expect(cases.map((c) => c.name)).toEqual(["test_add", "integrity"]);
    expect(cases[0]!.failure).toBeUndefined();
    expect(cases[1]!.failure.message).toMatch(
      /^not resolved: flagged: the agent changed the test runner's files/,
    );
    for (const c of cases) {
      expect(c.properties.property).toEqual([
        { name: "integrity_flags", value: "runner_files_restored" },
        // XML cannot hold ESC at all: it becomes U+FFFD.
        { name: "integrity_reason", value: REASON.replace("\u001b", "\uFFFD") },
      ]);
    }
    const clean = (doc.testsuites.testsuite as Array<Record<string, any>>).find((s) => s.name === "clean")!;
    expect(JSON.stringify(clean)).not.toMatch(/integrity/);
  });

  it("are listed in swebench-report.json beside SWE-bench's keys, which stay as they are", () => {
    const report = swebenchRunReport(results);
    expect(report.integrity_flagged_ids).toEqual(["flagged"]);
    expect(report.resolved_ids).toEqual(["clean"]);
    expect(report.unresolved_ids).toEqual(["flagged"]);
  });

  it("are named in the summary, with the agent's text made safe for a terminal", () => {
    const line = summaryLine(results, "/out");
    expect(line).toMatch(/^resolved 1\/2 \(50\.0%\) · 1 flagged by the integrity checks · /);
    expect(line).toContain(
      "\nflagged: flagged: unresolved: the agent changed the test runner's files (conftest.py\\e[2J)",
    );
    expect(line).not.toContain("\u001b");
  });

  it("get a badge by the task's status in report.html, from a script that parses", () => {
    // The page's script is text; a syntax error would leave the report blank.
    expect(() => new Function(REPORT_SCRIPT)).not.toThrow();
    expect(REPORT_SCRIPT).toContain('class: "badge flagged", title: flaggedReason(t)');
  });
});

describe("the new integrity flags flow where the others do", () => {
  const tampered = buildResults(runInfo(["tampered"]), [
    attempt("tampered", "unresolved", {
      tests: {
        exit_code: 0,
        timed_out: false,
        grade: {
          resolved: true,
          by: "test_names",
          reason: "FAIL_TO_PASS 1/1 pass",
          fail_to_pass: { passed: ["test_add"], failed: [], missing: [] },
        },
      },
      integrity: {
        test_files_restored: [],
        outside_editable_files: [],
        runner_files_restored: [],
        tampering: [{ path: "src/calc/core.py", line: 3, what: "assigns to unittest.TestCase.run" }],
        flags: ["framework_tampering"],
        reason:
          "the diff looks like it changes the test framework in-process (src/calc/core.py:3 assigns to unittest.TestCase.run); a static look, not a proof",
      },
    }),
  ]);

  it("results.json, junit.xml, swebench-report.json and the summary name the file and line", () => {
    expect(tampered.tasks[0]!.integrity_flags).toEqual(["framework_tampering"]);
    expect(junitXml(tampered)).toMatch(
      /<property name="integrity_flags" value="framework_tampering"\/>[\s\S]*src\/calc\/core\.py:3 assigns to unittest\.TestCase\.run/,
    );
    expect(swebenchRunReport(tampered).integrity_flagged_ids).toEqual(["tampered"]);
    expect(summaryLine(tampered, "/out")).toContain(
      "flagged: tampered: unresolved: the diff looks like it changes the test framework in-process (src/calc/core.py:3",
    );
  });
});
