/* eslint-disable @typescript-eslint/no-explicit-any */
import { XMLParser, XMLValidator } from "fast-xml-parser";
import { describe, expect, it } from "vitest";
import { junitXml, xmlEscape } from "../../../src/eval/junit-report.js";
import { buildResults } from "../../../src/eval/results-summary.js";
import { attempt, runInfo } from "./fixtures.js";

describe("junitXml", () => {
  const results = buildResults(runInfo(["ok", "bad", "slow", "left", 'we<ird"&']), [
    attempt("ok", "resolved"),
    attempt("bad", "unresolved", {
      tests: {
        exit_code: 1,
        timed_out: false,
        grade: { resolved: false, by: "exit_code", reason: "test_cmd exited 1" },
      },
    }),
    attempt("slow", "timeout", { error: "the tests did not finish within the task's 5 s (timeout_s)" }),
    attempt('we<ird"&', "resolved"),
  ]);
  const xml = junitXml(results, new Map([["bad", "FAILED t::x\u0000\u001b[31m <tag> & ]]>\n"]]));

  it("is well-formed XML, even with control characters and markup in the output", () => {
    expect(XMLValidator.validate(xml)).toBe(true);
  });

  it("has a suite per task: failures for unresolved, errors for broken, skipped for not run", () => {
    const doc = new XMLParser({ ignoreAttributes: false, attributeNamePrefix: "" }).parse(xml);
    const top = doc.testsuites;
    expect(top).toMatchObject({ tests: "5", failures: "1", errors: "1", skipped: "1" });
    const suites = top.testsuite as Array<Record<string, any>>;
    expect(suites.map((s) => s.name)).toEqual(["ok", "bad", "slow", "left", 'we<ird"&']);
    const only = (i: number) => suites[i]!.testcase as Record<string, unknown>;
    expect(only(1).failure).toMatchObject({ type: "unresolved", message: "unresolved: test_cmd exited 1" });
    expect(only(2).error).toMatchObject({ type: "timeout" });
    expect(only(3).skipped).toBeDefined();
    expect(only(0).failure ?? only(0).error).toBeUndefined();
    expect(String(only(1)["system-out"])).toContain("<tag> & ]]>");
    const props = suites[0]!.properties.property as Array<{ name: string; value: string }>;
    expect(props).toContainEqual({ name: "run_id", value: "20260101-000000-ab12" });
  });

  it("has one testcase per graded test, so CI shows which test failed", () => {
    const graded = buildResults(runInfo(["t"]), [
      attempt("t", "unresolved", {
        tests: {
          exit_code: 1,
          timed_out: false,
          grade: {
            resolved: false,
            by: "test_names",
            reason: "FAIL_TO_PASS 1/2 pass",
            fail_to_pass: { passed: ["test_a"], failed: ["test_b"], missing: [] },
            pass_to_pass: { passed: ["test_c"], failed: [], missing: ["test_d"] },
          },
        },
      }),
    ]);
    const doc = new XMLParser({ ignoreAttributes: false, attributeNamePrefix: "" }).parse(junitXml(graded));
    const suite = doc.testsuites.testsuite;
    expect(suite).toMatchObject({ name: "t", tests: "4", failures: "2", errors: "0" });
    const cases = suite.testcase as Array<Record<string, any>>;
    expect(cases.map((c) => [c.classname, c.name])).toEqual([
      ["t", "test_a"],
      ["t", "test_b"],
      ["t", "test_c"],
      ["t", "test_d"],
    ]);
    expect(cases[1]!.failure.type).toBe("FAIL_TO_PASS");
    expect(cases[3]!.failure.message).toMatch(/does not report this test/);
    expect(cases[0]!.failure).toBeUndefined();
  });

  it("escapes the five XML characters and replaces characters XML cannot hold", () => {
    expect(xmlEscape(`<a href="x">'&'</a>\u0007`)).toBe(
      "&lt;a href=&quot;x&quot;&gt;&apos;&amp;&apos;&lt;/a&gt;\uFFFD",
    );
  });
});
