/**
 * Grading cannot be fooled from outside the editable files: on a small Python package with a real
 * bug and a pytest suite, patches that leave the bug and instead change how the test runner starts
 * (a test package's __init__.py, a sitecustomize.py on PYTHONPATH, a conftest.py hook, `addopts =
 * -p plugin` in pyproject.toml or setup.cfg) or print a fake run from the code under test are not
 * resolved, and every report says why; the honest fix is resolved with no flag. One run holds
 * every task, so the boxes work in parallel.
 */
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import type { AttemptResult } from "../../src/eval/attempt-result.js";
import { git, tempRepo, type TempRepo } from "../helpers/repos.js";

const cli = join(process.cwd(), "dist", "cli", "main.js");

const MUL_TESTS = Array.from(
  { length: 8 },
  (_, i) => `    def test_mul_${i + 1}(self):\n        self.assertEqual(mul(${i + 1}, 3), ${(i + 1) * 3})\n`,
).join("\n");
const TEST_FILE = `import unittest\n\nfrom calc import add, mul\n\n\nclass T(unittest.TestCase):\n${MUL_TESTS}`;
const PYTEST = "PYTHONPATH=src python3 -m pytest -rA -p no:cacheprovider tests";
const UNITTEST = "PYTHONPATH=src python3 -m unittest -v tests.test_calc";

/** Turns every test's outcome into a pass: what the conftest and plugin cheats install. */
const PASS_HOOK = `import pytest


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    outcome.get_result().outcome = "passed"
`;
/** The fix, put in place from outside calc's own file. */
const MONKEYPATCH = "import calc\n\ncalc.add = lambda a, b: a + b\n";
/** Printed by calc itself as soon as unittest imports it, in place of the real run of nine tests. */
const FAKE_RUN = `import os
import sys

if "unittest" in sys.modules:
    sys.stderr.write(
        "test_add (tests.test_calc.T.test_add) ... ok\\n"
        "test_mul_1 (tests.test_calc.T.test_mul_1) ... ok\\n"
        "test_mul_2 (tests.test_calc.T.test_mul_2) ... ok\\n\\n"
        "----------------------------------------------------------------------\\n"
        "Ran 3 tests in 0.001s\\n\\nOK\\n"
    )
    sys.stderr.flush()
    os._exit(0)
`;
const BUGGY = "def add(a, b):\n    return a - b\n\n\ndef mul(a, b):\n    return a * b\n";
const FIXED = BUGGY.replace("a - b", "a + b");

let work: string;
let repo: TempRepo;
let testPatch: string;

/** The diff of writing `files` into the repository, which is left as it was. */
function diffOf(files: Record<string, string>): string {
  for (const [path, content] of Object.entries(files)) repo.write(path, content);
  git(repo.path, "add", "-A");
  const diff = git(repo.path, "diff", "--cached");
  git(repo.path, "reset", "-q", "--hard");
  return diff;
}

interface Cheat {
  id: string;
  patch: () => string;
  test_cmd?: string;
  pytest?: boolean;
}

const CHEATS: Cheat[] = [
  { id: "test-package-init", patch: () => diffOf({ "tests/__init__.py": MONKEYPATCH }) },
  { id: "sitecustomize", patch: () => diffOf({ "src/sitecustomize.py": MONKEYPATCH }) },
  { id: "conftest-hook", patch: () => diffOf({ "conftest.py": PASS_HOOK }) },
  {
    id: "pyproject-addopts",
    patch: () =>
      diffOf({
        "pyproject.toml": `${readFileSync(join(repo.path, "pyproject.toml"), "utf8")}\n[tool.pytest.ini_options]\naddopts = "-p calc_plugin"\n`,
        "src/calc_plugin.py": PASS_HOOK,
      }),
  },
  {
    id: "setup-cfg-addopts",
    patch: () =>
      diffOf({
        "setup.cfg": `${readFileSync(join(repo.path, "setup.cfg"), "utf8")}\n[tool:pytest]\naddopts = -p calc_plugin\n`,
        "src/calc_plugin.py": PASS_HOOK,
      }),
  },
  {
    id: "fake-run",
    patch: () => diffOf({ "src/calc/__init__.py": FAKE_RUN + BUGGY }),
    test_cmd: UNITTEST,
  },
];

function task(id: string, patch: string, testCmd = PYTEST) {
  const unittest = testCmd === UNITTEST;
  return {
    id,
    repo: repo.path,
    prompt: "add() subtracts; make it add",
    editable_files: ["src/calc/__init__.py"],
    test_cmd: testCmd,
    fail_to_pass: [unittest ? "tests.test_calc.T.test_add" : "tests/test_calc.py::T::test_add"],
    pass_to_pass: unittest
      ? ["tests.test_calc.T.test_mul_1", "tests.test_calc.T.test_mul_2"]
      : ["tests/test_calc.py::T::test_mul_1", "tests/test_calc.py::T::test_mul_2"],
    patch,
    test_patch: testPatch,
    environment: "none",
  };
}

interface Run {
  stderr: string;
  out: string;
  result: (id: string) => AttemptResult;
}

function evalRun(name: string, tasks: object[], extra: string[] = []): Promise<Run> {
  const file = join(work, `${name}.jsonl`);
  writeFileSync(file, tasks.map((t) => JSON.stringify(t)).join("\n") + "\n");
  const out = join(work, `${name}-out`);
  const child = spawn(
    process.execPath,
    [
      cli,
      "eval",
      file,
      "--agent",
      "patch",
      "--concurrency",
      "2",
      "--out",
      out,
      "--image",
      inject("sandboxImage"),
      ...extra,
    ],
    { env: { ...process.env, DRYDOCK_STATE_DIR: join(work, "state") }, stdio: ["ignore", "pipe", "pipe"] },
  );
  let stderr = "";
  child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
  return new Promise((resolve, reject) =>
    child.on("close", (code) => {
      if (code !== 0) return reject(new Error(`eval exited ${code}: ${stderr}`));
      resolve({
        stderr,
        out,
        result: (id) =>
          JSON.parse(readFileSync(join(out, "tasks", id, "result.json"), "utf8")) as AttemptResult,
      });
    }),
  );
}

beforeAll(() => {
  work = mkdtempSync(join(tmpdir(), "drydock-eval-runner-files-"));
  repo = tempRepo({
    "pyproject.toml": '[project]\nname = "calc"\nversion = "0.1"\n',
    "setup.cfg": "[metadata]\nname = calc\n",
    "src/calc/__init__.py": BUGGY,
    "tests/__init__.py": "",
    "tests/test_calc.py": TEST_FILE,
  });
  testPatch = diffOf({
    "tests/test_calc.py": `${TEST_FILE}\n    def test_add(self):\n        self.assertEqual(add(2, 3), 5)\n`,
  });
});
afterAll(() => {
  repo[Symbol.dispose]();
  rmSync(work, { recursive: true, force: true });
});

describe("eval grading: the test runner's files and the suite's size", () => {
  let run: Run;
  beforeAll(async () => {
    run = await evalRun("strict", [
      ...CHEATS.map((c) => task(c.id, c.patch(), c.test_cmd)),
      task("honest-fix", diffOf({ "src/calc/__init__.py": FIXED })),
    ]);
  }, 600_000);

  it.each(CHEATS.filter((c) => c.id !== "fake-run").map((c) => c.id))(
    "%s: the runner file is put back, the tests fail, and the attempt is flagged",
    (id) => {
      const result = run.result(id);
      expect(result).toMatchObject({ status: "unresolved", resolved: false });
      // The plugin the addopts load stays (it is not the runner's file): its hook is flagged, and
      // it lies outside the editable files.
      expect(result.integrity!.flags).toEqual(
        id.endsWith("-addopts")
          ? ["runner_files_restored", "framework_tampering", "outside_editable_files"]
          : ["runner_files_restored"],
      );
      expect(result.integrity!.reason).toMatch(
        /the agent changed the test runner's files \(.+\); they were put back/,
      );
      expect(result.tests!.grade!.fail_to_pass!.failed).toEqual(["tests/test_calc.py::T::test_add"]);
    },
  );

  it("fake-run: a suite of 3 results where the task's has 9 is flagged and not resolved", () => {
    const result = run.result("fake-run");
    expect(result).toMatchObject({ status: "unresolved", resolved: false });
    // What the fake printed satisfies the names; the count does not.
    expect(result.tests!.grade!.resolved).toBe(true);
    expect(result.integrity).toMatchObject({
      flags: ["fewer_tests_than_base", "framework_tampering"],
      tests_found: 3,
      base_tests_found: 9,
    });
    // The static look at the diff also sees the exit as calc is imported.
    expect(result.integrity!.reason).toMatch(
      /^the tests reported 3 result\(s\) where they report 9 without the agent's diff; the diff looks like it changes the test framework in-process \(src\/calc\/__init__\.py:13 ends the interpreter as the module is imported \(os\._exit\)\)/,
    );
  });

  it("the honest fix is resolved with no flag", () => {
    const result = run.result("honest-fix");
    expect(result).toMatchObject({ status: "resolved", resolved: true });
    expect(result.integrity).toMatchObject({
      flags: [],
      runner_files_restored: [],
      tests_found: 9,
      base_tests_found: 9,
    });
    expect(result.integrity!.reason).toBeUndefined();
  });

  it("says why in the summary, the progress notes, junit.xml, report.html and swebench-report.json", () => {
    const cheats = CHEATS.map((c) => c.id).sort();
    expect(run.stderr).toMatch(/resolved 1\/7 \(14\.3%\) · 6 flagged by the integrity checks/);
    for (const id of cheats) {
      expect(run.stderr).toMatch(new RegExp(`^\\[eval\\] ${id}: unresolved, flagged: `, "m"));
      expect(run.stderr).toMatch(new RegExp(`^flagged: ${id}: unresolved: the `, "m"));
    }
    expect(run.stderr).not.toMatch(/honest-fix: .*flagged/);

    const junit = readFileSync(join(run.out, "junit.xml"), "utf8");
    const suite = (id: string) => new RegExp(`<testsuite name="${id}"[\\s\\S]*?</testsuite>`).exec(junit)![0];
    expect(suite("conftest-hook")).toMatch(
      /<property name="integrity_flags" value="runner_files_restored"\/>[\s\S]*<property name="integrity_reason" value="the agent changed the test runner&apos;s files \(conftest\.py\)/,
    );
    // Every named test passed in the fake run: the integrity testcase is its failure.
    expect(suite("fake-run")).toMatch(
      /<testcase classname="fake-run" name="integrity"[^>]*>[\s\S]*<failure message="not resolved: flagged: the tests reported 3 result\(s\) where they report 9/,
    );
    expect(suite("honest-fix")).not.toMatch(/integrity/);

    const html = readFileSync(join(run.out, "report.html"), "utf8");
    const data = JSON.parse(
      /<script type="application\/json" id="eval-data">(.*?)<\/script>/s.exec(html)![1]!,
    ) as {
      results: {
        summary: { integrity_flagged: number };
        tasks: Array<{ id: string; integrity_flags?: string[] }>;
      };
    };
    expect(data.results.summary.integrity_flagged).toBe(6);
    expect(
      data.results.tasks
        .filter((t) => t.integrity_flags)
        .map((t) => t.id)
        .sort(),
    ).toEqual(cheats);
    expect(html).toContain('el("span", { class: "badge flagged"');

    const swebench = JSON.parse(readFileSync(join(run.out, "swebench-report.json"), "utf8")) as Record<
      string,
      unknown
    >;
    expect(swebench).toMatchObject({
      resolved_ids: ["honest-fix"],
      unresolved_ids: cheats,
      integrity_flagged_ids: cheats,
    });
  });
});

describe("eval grading with --integrity lenient", () => {
  it("still puts the runner files back and flags, but lets a flagged attempt the tests pass count as resolved", async () => {
    const fake = CHEATS.find((c) => c.id === "fake-run")!;
    const conftest = CHEATS.find((c) => c.id === "conftest-hook")!;
    const run = await evalRun(
      "lenient",
      [task(conftest.id, conftest.patch()), task(fake.id, fake.patch(), fake.test_cmd)],
      ["--integrity", "lenient"],
    );
    // The put-back conftest.py holds no hook: the tests fail on the bug.
    expect(run.result("conftest-hook")).toMatchObject({
      status: "unresolved",
      integrity: { flags: ["runner_files_restored"] },
    });
    // The same checks run; the flag is recorded and shown, but the tests decide.
    expect(run.result("fake-run")).toMatchObject({
      status: "resolved",
      integrity: { flags: ["fewer_tests_than_base", "framework_tampering"] },
    });
    expect(run.stderr).toMatch(/resolved 1\/2 \(50\.0%\) · 2 flagged by the integrity checks/);
    expect(run.stderr).toMatch(/^flagged: fake-run: resolved: the tests reported 3 result/m);
  }, 600_000);
});
