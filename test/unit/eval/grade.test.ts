import { describe, expect, it } from "vitest";
import { gradeTests } from "../../../src/eval/grade.js";

const pytest = "tests/t.py::test_fixed PASSED\ntests/t.py::test_kept PASSED\ntests/t.py::test_other FAILED\n";

describe("gradeTests", () => {
  it("grades by exit code when the task names no tests", () => {
    expect(gradeTests({}, { exitCode: 0, output: "" })).toMatchObject({ resolved: true, by: "exit_code" });
    expect(gradeTests({}, { exitCode: 1, output: "" })).toMatchObject({
      resolved: false,
      reason: "test_cmd exited 1",
    });
    expect(gradeTests({ fail_to_pass: [] }, { exitCode: undefined, output: "" }).resolved).toBe(false);
  });

  it("resolves when every FAIL_TO_PASS and PASS_TO_PASS test passed, whatever the exit code", () => {
    const grade = gradeTests(
      { fail_to_pass: ["tests/t.py::test_fixed"], pass_to_pass: ["tests/t.py::test_kept"] },
      { exitCode: 1, output: pytest },
    );
    expect(grade).toMatchObject({
      resolved: true,
      by: "test_names",
      reason: "FAIL_TO_PASS 1/1 pass; PASS_TO_PASS 1/1 pass",
      tests_found: 3,
    });
  });

  it("fails on a named test that failed, and counts a name missing from the output as failed", () => {
    const grade = gradeTests(
      {
        fail_to_pass: ["tests/t.py::test_other", "tests/t.py::test_gone"],
        pass_to_pass: ["tests/t.py::test_kept"],
      },
      { exitCode: 0, output: pytest },
    );
    expect(grade.resolved).toBe(false);
    expect(grade.fail_to_pass).toEqual({
      passed: [],
      failed: ["tests/t.py::test_other"],
      missing: ["tests/t.py::test_gone"],
    });
    expect(grade.reason).toBe("FAIL_TO_PASS 0/2 pass; PASS_TO_PASS 1/1 pass; 1 not found in the output");
  });

  it("says so when the output holds no test result it recognises", () => {
    const grade = gradeTests({ pass_to_pass: ["x"] }, { exitCode: 0, output: "3 passed\n" });
    expect(grade.resolved).toBe(false);
    expect(grade.reason).toMatch(/no test results recognised/);
  });
});

describe("gradeTests with unittest's output", () => {
  it("counts each test once, though a test is known by two names (Python 3.11's format)", () => {
    const output = [
      "test_a (pkg.test_m.T.test_a) ... ok",
      "test_b (pkg.test_m.T.test_b) ... FAIL",
      "",
      "======================================================================",
      "FAIL: test_b (pkg.test_m.T.test_b)",
      "----------------------------------------------------------------------",
      "Ran 2 tests in 0.001s",
      "",
      "FAILED (failures=1)",
    ].join("\n");
    const grade = gradeTests(
      { fail_to_pass: ["test_b (pkg.test_m.T)"], pass_to_pass: ["pkg.test_m.T.test_a"] },
      { exitCode: 1, output },
    );
    expect(grade.tests_found).toBe(2);
    expect(grade.fail_to_pass?.failed).toEqual(["test_b (pkg.test_m.T)"]);
    expect(grade.pass_to_pass?.passed).toEqual(["pkg.test_m.T.test_a"]);
  });
});
