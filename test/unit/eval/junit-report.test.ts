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

  it("has one testcase per task: failures for unresolved, errors for broken, skipped for not run", () => {
    const doc = new XMLParser({ ignoreAttributes: false, attributeNamePrefix: "" }).parse(xml);
    const suites = doc.testsuites;
    expect(suites).toMatchObject({ tests: "5", failures: "1", errors: "1", skipped: "1" });
    const cases = suites.testsuite.testcase as Array<Record<string, unknown>>;
    expect(cases.map((c) => c.name)).toEqual(["ok", "bad", "slow", "left", 'we<ird"&']);
    expect(cases[1]!.failure).toMatchObject({ type: "unresolved", message: "unresolved: test_cmd exited 1" });
    expect(cases[2]!.error).toMatchObject({ type: "timeout" });
    expect(cases[3]!.skipped).toBeDefined();
    expect(cases[0]!.failure ?? cases[0]!.error).toBeUndefined();
    expect(String(cases[1]!["system-out"])).toContain("<tag> & ]]>");
  });

  it("escapes the five XML characters and replaces characters XML cannot hold", () => {
    expect(xmlEscape(`<a href="x">'&'</a>\u0007`)).toBe(
      "&lt;a href=&quot;x&quot;&gt;&apos;&amp;&apos;&lt;/a&gt;\uFFFD",
    );
  });
});
