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
      "tests/pytest.ini",
      "pytest.toml",
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
    expect(runnerFileKind("babel.config.js")).toBe("javascript runner configuration");
  });

  it("takes jest's and vitest's setup files, the root __mocks__ and a tracked node_modules", () => {
    for (const path of [
      "src/jest.setup.ts",
      "jest-setup.js",
      "src/setupTests.ts",
      "vitest.setup.mts",
      "__mocks__/fs.js",
      "node_modules/.bin/jest",
      "web/node_modules/jest-circus/build/run.js",
    ])
      expect(runnerFileKind(path), path).toBe("javascript test setup");
    expect(runnerFileKind("src/__mocks__/api.js")).toBeUndefined();
    expect(runnerFileKind("src/setup.ts")).toBeUndefined();
  });

  it("takes go.mod (replace), go.work and vendor/", () => {
    for (const path of ["go.mod", "go.sum", "sub/go.mod", "go.work", "vendor/github.com/x/assert/a.go"])
      expect(runnerFileKind(path), path).toBe("go build configuration");
    expect(runnerFileKind("pkg/vendor.go")).toBeUndefined();
  });

  it("takes cargo's build script, configuration and manifests", () => {
    for (const path of [
      "build.rs",
      "crates/x/build.rs",
      ".cargo/config.toml",
      ".cargo/config",
      "Cargo.toml",
      "Cargo.lock",
      "rust-toolchain.toml",
    ])
      expect(runnerFileKind(path), path).toBe("cargo configuration");
    expect(runnerFileKind("src/build.rs.txt")).toBeUndefined();
    expect(runnerFileKind("src/config.toml")).toBeUndefined();
  });

  it("takes maven's and gradle's build files, wrappers and JUnit's registered extensions", () => {
    for (const path of [
      "pom.xml",
      "module/pom.xml",
      "build.gradle.kts",
      "settings.gradle",
      "gradle.properties",
      "gradle/wrapper/gradle-wrapper.properties",
      "gradlew",
      ".mvn/maven.config",
      "src/test/resources/junit-platform.properties",
      "src/test/resources/META-INF/services/org.junit.jupiter.api.extension.Extension",
    ])
      expect(runnerFileKind(path), path).toBe("jvm build configuration");
    expect(runnerFileKind("src/main/java/App.java")).toBeUndefined();
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
