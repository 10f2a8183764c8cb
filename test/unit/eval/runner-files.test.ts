import { describe, expect, it } from "vitest";
import { runnerFileKind, runnerFiles } from "../../../src/eval/runner-files.js";

describe("runnerFileKind", () => {
  it("takes conftest.py at any depth", () => {
    expect(runnerFileKind("conftest.py")).toBe("conftest");
    expect(runnerFileKind("src/pkg/tests/conftest.py")).toBe("conftest");
    expect(runnerFileKind("./conftest.py")).toBe("conftest");
  });

  it("takes the files Python imports at start-up, wherever they are", () => {
    expect(runnerFileKind("src/sitecustomize.py")).toBe("python start-up");
    expect(runnerFileKind("usercustomize.py")).toBe("python start-up");
    expect(runnerFileKind("lib/evil.pth")).toBe("python start-up");
  });

  it("takes pytest's configuration files whole, dependencies and all", () => {
    for (const name of [
      "pytest.ini",
      ".pytest.ini",
      "tox.ini",
      "setup.cfg",
      "pyproject.toml",
      "sub/pyproject.toml",
    ])
      expect(runnerFileKind(name)).toBe("pytest configuration");
  });

  it("takes __init__.py in a test directory, not in the package under test", () => {
    for (const path of [
      "tests/__init__.py",
      "test/__init__.py",
      "pkg/tests/unit/__init__.py",
      "testing/__init__.py",
      "pkg/my_tests/__init__.py",
    ])
      expect(runnerFileKind(path)).toBe("test package");
    expect(runnerFileKind("src/calc/__init__.py")).toBeUndefined();
    expect(runnerFileKind("contest/__init__.py")).toBeUndefined();
  });

  it("takes jest, vitest, mocha and karma configuration and package.json", () => {
    for (const path of [
      "jest.config.js",
      "jest.config.ts",
      "web/vitest.config.mts",
      "vitest.workspace.ts",
      "vite.config.ts",
      ".mocharc.yml",
      ".mocharc.json",
      "karma.conf.js",
      "package.json",
    ])
      expect(runnerFileKind(path)).toBe("javascript runner configuration");
    expect(runnerFileKind("src/jest.setup.ts")).toBeUndefined();
  });

  it("takes Go test files and testdata", () => {
    expect(runnerFileKind("pkg/calc_test.go")).toBe("go test");
    expect(runnerFileKind("pkg/testdata/golden.txt")).toBe("go test");
    expect(runnerFileKind("pkg/calc.go")).toBeUndefined();
  });

  it("leaves ordinary files alone", () => {
    for (const path of [
      "calc.py",
      "src/calc.py",
      "README.md",
      "tests/test_calc.py",
      "setup.py",
      "pkg/conftest_utils.py",
    ])
      expect(runnerFileKind(path)).toBeUndefined();
  });

  it("lists the runner files among paths, in order", () => {
    expect(runnerFiles(["calc.py", "conftest.py", "setup.cfg"])).toEqual([
      { path: "conftest.py", kind: "conftest" },
      { path: "setup.cfg", kind: "pytest configuration" },
    ]);
  });
});
