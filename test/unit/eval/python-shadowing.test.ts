import { describe, expect, it } from "vitest";
import {
  commandPathRoots,
  isRunnerModuleName,
  modulesRunWithDashM,
  pytestPathRoots,
  shadowingModules,
} from "../../../src/eval/python-shadowing.js";

const BASE = new Set([
  "pyproject.toml",
  "src/calc/__init__.py",
  "src/calc/core.py",
  "tests/test_calc.py",
  "pkg/__init__.py",
  "pkg/tests/__init__.py",
  "pkg/tests/test_pkg.py",
  "django/http/__init__.py",
]);
const PYTEST = "PYTHONPATH=src python3 -m pytest -rA tests";
const shadows = (changed: string[], testCmd = PYTEST, baseFiles = BASE, testFiles: string[] = []) =>
  shadowingModules({ changed, baseFiles, testCmd, testFiles }).map((s) => `${s.path}=${s.module}`);

describe("the names a shadow takes", () => {
  it("the standard library's, the runners', pytest plugins' and the -m module's", () => {
    for (const name of [
      "unittest",
      "traceback",
      "json",
      "pytest",
      "_pytest",
      "pluggy",
      "py",
      "pytest_cov",
      "_distutils_hack",
    ])
      expect(isRunnerModuleName(name), name).toBe(true);
    for (const name of ["calc", "tests", "test", "helpers", "utils"])
      expect(isRunnerModuleName(name), name).toBe(false);
    expect(isRunnerModuleName("tox", new Set(["tox"]))).toBe(true);
  });

  it("reads the module of -m, not pytest's own -m MARKEXPR", () => {
    expect(modulesRunWithDashM("python3 -m pytest -rA")).toEqual(["pytest"]);
    expect(modulesRunWithDashM("cd x && /usr/bin/python3.11 -u -B -m unittest.main -v")).toEqual([
      "unittest",
    ]);
    expect(modulesRunWithDashM("coverage run -m tox -e py")).toEqual(["tox"]);
    expect(modulesRunWithDashM("pytest -m slow tests")).toEqual([]);
  });
});

describe("where sys.path looks first", () => {
  it("the root, src, what the command cds into and its PYTHONPATH", () => {
    expect(commandPathRoots("python -m pytest").sort()).toEqual(["", "src"]);
    expect(
      commandPathRoots(
        "cd /workspace/lib && PYTHONPATH=../vendor:$PYTHONPATH:/workspace/extra:/opt/x python -m pytest",
      ).sort(),
    ).toEqual(["", "extra", "lib", "src", "vendor"]);
  });

  it("pytest's prepend mode: the first directory up from a test file without __init__.py", () => {
    expect(pytestPathRoots(BASE, BASE).sort()).toEqual(["", "tests"]);
  });
});

describe("modules that shadow the runner's", () => {
  it("a root pytest.py under python -m pytest, and a pytest package", () => {
    expect(shadows(["pytest.py", "src/calc/core.py"])).toEqual(["pytest.py=pytest"]);
    expect(shadows(["_pytest/__init__.py", "_pytest/runner.py"])).toEqual([
      "_pytest/__init__.py=_pytest",
      "_pytest/runner.py=_pytest",
    ]);
  });

  it("a standard library module in src (PYTHONPATH) or in a test directory pytest puts on sys.path", () => {
    expect(shadows(["src/unittest/__init__.py", "src/unittest/case.py"])).toEqual([
      "src/unittest/__init__.py=unittest",
      "src/unittest/case.py=unittest",
    ]);
    expect(shadows(["tests/traceback.py", "tests/json/__init__.py"])).toEqual([
      "tests/traceback.py=traceback",
      "tests/json/__init__.py=json",
    ]);
    // An extension module and a sourceless .pyc are modules too.
    expect(shadows(["inspect.cpython-311-x86_64-linux-gnu.so", "typing.pyc"])).toEqual([
      "inspect.cpython-311-x86_64-linux-gnu.so=inspect",
      "typing.pyc=typing",
    ]);
  });

  it("the module the command runs with -m", () => {
    expect(shadows(["tox.py"], "python -m tox")).toEqual(["tox.py=tox"]);
    expect(shadows(["tox.py"], "python -m pytest")).toEqual([]);
  });

  it("leaves alone a directory without __init__.py (a namespace package never wins)", () => {
    expect(shadows(["json/data.txt", "site/index.html"])).toEqual([]);
  });

  it("leaves alone what is not first on sys.path: a subpackage, a package's own module", () => {
    // pkg/tests has __init__.py: pytest puts the root first, not pkg/ or pkg/tests/.
    expect(
      shadows(["pkg/json.py", "pkg/tests/unittest.py", "django/http/request.py", "src/calc/types.py"]),
    ).toEqual([]);
  });

  it("leaves alone the project's own module of such a name, and the test patch's files", () => {
    const pytestRepo = new Set([
      "src/_pytest/__init__.py",
      "src/_pytest/runner.py",
      "src/pytest/__init__.py",
      "testing/test_x.py",
    ]);
    expect(
      shadows(["src/_pytest/runner.py", "src/pytest/__init__.py"], "pytest testing", pytestRepo),
    ).toEqual([]);
    expect(shadows(["dataclasses.py"], PYTEST, new Set([...BASE, "dataclasses.py"]))).toEqual([]);
    expect(shadows(["tests/json/__init__.py"], PYTEST, BASE, ["tests/json/__init__.py"])).toEqual([]);
  });
});
