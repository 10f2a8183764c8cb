/**
 * Files that decide how a test runner starts, finds and reports tests rather than what the code
 * under test does: an agent that changes one can make failing tests pass without fixing anything
 * (a conftest.py hook that rewrites outcomes, a sitecustomize.py on PYTHONPATH, `addopts = -p
 * plugin`, a `tests/__init__.py` that patches the code, a TestMain in a `_test.go` file, a
 * `runner =` in .cargo/config.toml, `testFailureIgnore` in a pom.xml). Grading puts them back as
 * they were before the agent, as it does the test patch's files. Pure.
 *
 * Known by name here; a module that shadows one the runner imports (a root `pytest.py`) is known by
 * where it sits and what the repository had before (python-shadowing.ts).
 */

/** Why a path counts as the runner's, for people reading a result. */
export type RunnerFileKind =
  | "conftest"
  | "python start-up"
  | "pytest configuration"
  | "test package"
  | "javascript runner configuration"
  | "javascript test setup"
  | "go test"
  | "go build configuration"
  | "cargo configuration"
  | "jvm build configuration"
  | "shadows a module the runner imports";

/** Directory names that hold tests in the layouts pytest, unittest and Django use. */
const TEST_DIR = /^(tests?|testing|.+_tests?|tests?_.+)$/;
/** jest, vitest, mocha and karma find their configuration under these names (any extension). */
const JS_CONFIG =
  /^(jest\.config|vitest\.config|vitest\.workspace|vite\.config|karma\.conf|\.mocharc|babel\.config|\.babelrc|\.swcrc)(\.[\w-]+)*$/;
/**
 * Files jest and vitest run before every test file by convention (`setupFiles`,
 * `setupFilesAfterEach`, CRA's setupTests): they can replace `expect` or the test globals.
 */
const JS_SETUP =
  /^(jest[.-]setup|jest\.setup\.after\w*|setupTests|vitest[.-]setup|test[.-]setup)(\.[\w-]+)+$/;
/** Files of maven, gradle and the JUnit platform that decide which tests run and what a failure does. */
const JVM_BUILD = new Set([
  "pom.xml",
  "build.gradle",
  "build.gradle.kts",
  "settings.gradle",
  "settings.gradle.kts",
  "gradle.properties",
  "gradlew",
  "gradlew.bat",
  "mvnw",
  "mvnw.cmd",
  "junit-platform.properties",
]);

/**
 * The class of runner file `path` (relative to the repository, `/`-separated) belongs to, or
 * undefined for an ordinary file.
 *
 * pyproject.toml, setup.cfg and package.json hold more than test settings (dependencies, package
 * metadata): the whole file counts, because the part that matters cannot be told apart without
 * parsing it exactly as pytest, configparser or npm would, and any difference between two parsers
 * is a way in. A dependency the agent adds there does not reach the tests anyway: the box's
 * environment is installed by the task's setup before the agent's diff is applied.
 */
export function runnerFileKind(path: string): RunnerFileKind | undefined {
  const parts = path.replace(/^\.\//, "").split("/");
  const name = parts[parts.length - 1]!;
  const dirs = parts.slice(0, -1);
  if (name === "conftest.py") return "conftest";
  // Python imports these at start-up from anywhere on sys.path (PYTHONPATH, the working directory).
  if (name === "sitecustomize.py" || name === "usercustomize.py" || name.endsWith(".pth"))
    return "python start-up";
  if (
    [
      "pytest.ini",
      ".pytest.ini",
      "pytest.toml",
      ".pytest.toml",
      "tox.ini",
      "setup.cfg",
      "pyproject.toml",
    ].includes(name)
  )
    return "pytest configuration";
  // A test package's __init__.py runs before any of its tests (and unittest's load_tests lives there).
  if (name === "__init__.py" && dirs.some((d) => TEST_DIR.test(d))) return "test package";
  if (JS_CONFIG.test(name) || name === "package.json") return "javascript runner configuration";
  // The repository's node_modules (the runner itself, .bin/jest) when it is tracked, and the root
  // __mocks__ folder, whose mocks of node modules jest applies without being asked.
  if (dirs.includes("node_modules") || dirs[0] === "__mocks__" || JS_SETUP.test(name))
    return "javascript test setup";
  // Every _test.go file of a package is compiled into its test binary (init, TestMain).
  if (name.endsWith("_test.go") || dirs.includes("testdata")) return "go test";
  // go.mod's replace swaps any dependency (an assertion library) for a local copy; vendor/ holds them.
  if (["go.mod", "go.sum", "go.work", "go.work.sum"].includes(name) || dirs[0] === "vendor")
    return "go build configuration";
  // build.rs runs before the tests compile; .cargo/config can name a `runner` for test binaries;
  // Cargo.toml's [patch] swaps crates and `harness = false` replaces libtest.
  if (
    name === "build.rs" ||
    ["Cargo.toml", "Cargo.lock", "rust-toolchain", "rust-toolchain.toml"].includes(name) ||
    (dirs.at(-1) === ".cargo" && /^config(\.toml)?$/.test(name))
  )
    return "cargo configuration";
  // Build files (surefire's testFailureIgnore, test includes), wrappers, .mvn/ (maven.config,
  // extensions), and JUnit extensions registered as services.
  if (
    JVM_BUILD.has(name) ||
    dirs.includes(".mvn") ||
    (dirs.at(-2) === "gradle" && dirs.at(-1) === "wrapper") ||
    (dirs.includes("META-INF") && dirs.at(-1) === "services" && /^org\.junit\./.test(name))
  )
    return "jvm build configuration";
  return undefined;
}

/** The runner files among `paths`, each with its class, in the order given. */
export function runnerFiles(paths: string[]): Array<{ path: string; kind: RunnerFileKind }> {
  return paths.flatMap((path) => {
    const kind = runnerFileKind(path);
    return kind ? [{ path, kind }] : [];
  });
}
