import { describe, expect, it } from "vitest";
import { parseGoTestOutput } from "../../../src/eval/test-output/go-test-output.js";
import { jsonObjectsIn, parseJestOutput } from "../../../src/eval/test-output/jest-output.js";
import { parsePytestOutput } from "../../../src/eval/test-output/pytest-output.js";
import { parseTestOutput } from "../../../src/eval/test-output/test-results.js";
import { parseUnittestOutput } from "../../../src/eval/test-output/unittest-output.js";

const statuses = (s: { byName: Map<string, string> }) => Object.fromEntries(s.byName);

describe("parsePytestOutput", () => {
  it("reads verbose lines with and without the percentage, a skip's reason after the word", () => {
    const out = parsePytestOutput(
      [
        "tests/test_a.py::test_one PASSED                                   [ 33%]",
        "tests/test_a.py::TestK::test_two[param-1] FAILED                  [ 66%]",
        "tests/test_a.py::test_three SKIPPED (no db)                        [100%]",
        "tests/test_a.py::test_four XFAIL",
        "tests/test_a.py::test_five ERROR",
      ].join("\n"),
    );
    expect(statuses(out)).toEqual({
      "tests/test_a.py::test_one": "passed",
      "tests/test_a.py::TestK::test_two[param-1]": "failed",
      "tests/test_a.py::test_three": "skipped",
      "tests/test_a.py::test_four": "passed",
      "tests/test_a.py::test_five": "failed",
    });
  });

  it("reads the -rA short summary, message after ' - ' left out", () => {
    const out = parsePytestOutput(
      [
        "=========================== short test summary info ============================",
        "PASSED tests/test_a.py::test_one",
        "FAILED tests/test_a.py::test_two - AssertionError: assert 1 == 2",
        "ERROR tests/test_b.py::test_setup - fixture 'db' not found",
        "SKIPPED [1] tests/test_a.py:9: no db",
        "========================= 1 failed, 1 passed in 0.03s ==========================",
      ].join("\n"),
    );
    expect(statuses(out)).toEqual({
      "tests/test_a.py::test_one": "passed",
      "tests/test_a.py::test_two": "failed",
      "tests/test_b.py::test_setup": "failed",
    });
  });

  it("keeps failed when a test is reported passed and failed (a rerun)", () => {
    const out = parsePytestOutput("FAILED t.py::x - boom\nPASSED t.py::x\n");
    expect(out.get("t.py::x")).toBe("failed");
  });
});

describe("parseUnittestOutput", () => {
  it("reads Python 3.11+ lines and names tests both ways", () => {
    const out = parseUnittestOutput(
      "test_add (test_calc.CalcTest.test_add) ... ok\ntest_sub (test_calc.CalcTest.test_sub) ... FAIL\n",
    );
    expect(out.get("test_calc.CalcTest.test_add")).toBe("passed");
    expect(out.get("test_add (test_calc.CalcTest)")).toBe("passed");
    expect(out.get("test_calc.CalcTest.test_sub")).toBe("failed");
  });

  it("reads older lines, docstrings on the next line, skips and expected failures", () => {
    const out = parseUnittestOutput(
      [
        "test_a (app.tests.ModelTests) ... ok",
        "test_b (app.tests.ModelTests)",
        "The b case. ... ERROR",
        "test_c (app.tests.ModelTests) ... skipped 'needs db'",
        "test_d (app.tests.ModelTests) ... expected failure",
        "test_e (app.tests.ModelTests) ... unexpected success",
      ].join("\n"),
    );
    expect(statuses(out)).toMatchObject({
      "app.tests.ModelTests.test_a": "passed",
      "test_b (app.tests.ModelTests)": "failed",
      "app.tests.ModelTests.test_c": "skipped",
      "app.tests.ModelTests.test_d": "passed",
      "app.tests.ModelTests.test_e": "failed",
    });
  });

  it("marks tests named in FAIL: and ERROR: headers as failed", () => {
    const out = parseUnittestOutput("======\nERROR: test_x (pkg.T.test_x)\n------\nTraceback ...\n");
    expect(out.get("pkg.T.test_x")).toBe("failed");
  });
});

describe("parseJestOutput", () => {
  it("reads vitest's verbose reporter (file > suite > name)", () => {
    const out = parseJestOutput(
      [
        " ✓ a.test.mjs > math > adds 1ms",
        " × a.test.mjs > math > nested > fails here 4ms",
        "   → expected 1 to be 2 // Object.is equality",
        " ↓ a.test.mjs > math > skipped one",
        " ✓ a.test.mjs > top level 0ms",
      ].join("\n"),
    );
    expect(out.get("math > adds")).toBe("passed");
    expect(out.get("a.test.mjs > math > adds")).toBe("passed");
    expect(out.get("math nested fails here")).toBe("failed");
    expect(out.get("math > skipped one")).toBe("skipped");
    expect(out.get("top level")).toBe("passed");
  });

  it("reads vitest's default reporter failure lines", () => {
    const out = parseJestOutput(
      " FAIL  a.test.mjs > math > nested > fails here\nAssertionError: expected 1 to be 2\n",
    );
    expect(out.get("math > nested > fails here")).toBe("failed");
  });

  it("reads jest's verbose tree with nested describes", () => {
    const out = parseJestOutput(
      [
        "PASS src/calc.test.js",
        "  calc",
        "    ✓ adds (2 ms)",
        "    nested",
        "      ✕ divides (1 ms)",
        "    ○ skipped later",
        "  ✓ stands alone",
        "",
        "  ● calc › nested › divides",
        "",
        "    expect(received).toBe(expected)",
        "",
        "Tests:       1 failed, 2 passed, 3 total",
      ].join("\n"),
    );
    expect(statuses(out)).toMatchObject({
      "calc adds": "passed",
      "calc > nested > divides": "failed",
      "calc nested divides": "failed",
      "calc > skipped later": "skipped",
      "stands alone": "passed",
    });
    expect(out.get("expect(received).toBe(expected)")).toBeUndefined();
  });

  it("reads JSON reports (vitest --reporter=json, jest --json) among other output", () => {
    const report = {
      numTotalTests: 2,
      testResults: [
        {
          name: "/w/a.test.ts",
          assertionResults: [
            { ancestorTitles: ["math"], title: "adds", fullName: "math adds", status: "passed" },
            {
              ancestorTitles: ["math", "nested"],
              title: "fails here",
              fullName: "math nested fails here",
              status: "failed",
            },
            { ancestorTitles: [], title: "later", fullName: "later", status: "pending" },
          ],
        },
      ],
    };
    const out = parseJestOutput(`> npm test\n${JSON.stringify(report, null, 2)}\nnpm ERR! Test failed.\n`);
    expect(out.get("math adds")).toBe("passed");
    expect(out.get("math > nested > fails here")).toBe("failed");
    expect(out.get("later")).toBe("skipped");
  });

  it("finds JSON objects that start a line, strings with braces included", () => {
    expect(jsonObjectsIn('x {"no": 1}\n{"a": "}{", "b": {"c": [1]}}\ntrailing')).toEqual([
      { a: "}{", b: { c: [1] } },
    ]);
  });
});

describe("parseGoTestOutput", () => {
  it("reads go test -v with subtests", () => {
    const out = parseGoTestOutput(
      [
        "=== RUN   TestAdd",
        "--- PASS: TestAdd (0.00s)",
        "=== RUN   TestDiv",
        "=== RUN   TestDiv/by_zero",
        "    --- FAIL: TestDiv/by_zero (0.00s)",
        "--- FAIL: TestDiv (0.00s)",
        "--- SKIP: TestSlow (0.00s)",
        "FAIL",
      ].join("\n"),
    );
    expect(statuses(out)).toEqual({
      TestAdd: "passed",
      "TestDiv/by_zero": "failed",
      TestDiv: "failed",
      TestSlow: "skipped",
    });
  });

  it("reads go test -json events", () => {
    const out = parseGoTestOutput(
      [
        '{"Action":"run","Package":"x","Test":"TestA"}',
        '{"Action":"output","Package":"x","Test":"TestA","Output":"--- PASS: TestA (0.00s)\\n"}',
        '{"Action":"pass","Package":"x","Test":"TestA","Elapsed":0}',
        '{"Action":"fail","Package":"x","Test":"TestB","Elapsed":0}',
        '{"Action":"fail","Package":"x","Elapsed":0.1}',
      ].join("\n"),
    );
    expect(statuses(out)).toEqual({ TestA: "passed", TestB: "failed" });
  });
});

describe("parseTestOutput", () => {
  it("strips colours and merges every runner's results", () => {
    const out = parseTestOutput("\x1b[32mtests/t.py::test_a PASSED\x1b[0m\n--- FAIL: TestGo (0.01s)\n");
    expect(out.get("tests/t.py::test_a")).toBe("passed");
    expect(out.get("TestGo")).toBe("failed");
    expect(out.get("  tests/t.py::test_a ")).toBe("passed");
  });
});
