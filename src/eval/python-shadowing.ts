/**
 * Modules a patch adds where Python looks first, under the name of a module the test runner or
 * the interpreter imports: a root `pytest.py` is the runner under `python -m pytest` (the working
 * directory is first on sys.path), a `unittest/` package or a `traceback.py` in a test directory
 * pytest puts on sys.path replaces the standard library's for every import after it. Such a module
 * is a runner file (runner-files.ts): grading removes it before the tests, and the attempt is
 * flagged. Pure.
 *
 * What counts:
 * - the names: the standard library's (python-stdlib-modules.ts), the runners' and what they load
 *   at start-up (RUNNER_MODULES, and `pytest_*` plugins), and the module the test command runs
 *   with `python -m`;
 * - the places: the directories sys.path holds before site-packages when the tests run: the
 *   repository's root (the test command's working directory, first under `python -m`), a directory
 *   the test command `cd`s into or names in PYTHONPATH, `src/` (a src layout's editable install),
 *   and each directory pytest puts first on sys.path to import a test file or a conftest.py
 *   ("prepend" import mode: the first directory up from the file without an `__init__.py`);
 * - the forms: `name.py`, `name.pyc`, an extension module (`name.so`, `name.cpython-311-….so`,
 *   `name.pyd`), or a regular package `name/__init__.py` (a directory without `__init__.py` is a
 *   namespace package, which never wins over a module found later on the path).
 *
 * A module of such a name that the repository had before the agent is the project's own (the pytest
 * repository's `src/_pytest`, a backport's `dataclasses.py`): changing it is the project's work, and
 * it is left alone.
 */
import { PYTHON_STDLIB_MODULES } from "./python-stdlib-modules.js";

/** What the runners import before any test, besides the standard library. */
export const RUNNER_MODULES: ReadonlySet<string> = new Set([
  // pytest and what it imports at start-up (8.x, and older releases' dependencies).
  "pytest",
  "_pytest",
  "py",
  "pluggy",
  "iniconfig",
  "packaging",
  "exceptiongroup",
  "tomli",
  "colorama",
  "attr",
  "attrs",
  // Plugins found by entry point and loaded before collection.
  "xdist",
  "hypothesis",
  "_hypothesis_pytestplugin",
  "_hypothesis_globals",
  "coverage",
  "anyio",
  "faker",
  "syrupy",
  "typeguard",
  // Other runners.
  "nose",
  "nose2",
  "green",
  "trial",
  "twisted",
  // Imported by site-packages' .pth files at interpreter start (setuptools, virtualenv).
  "_distutils_hack",
  "_virtualenv",
]);

/** Name prefixes of the same kind: pytest plugins, editable installs' import hooks. */
const RUNNER_PREFIXES = ["pytest_", "_pytest", "__editable__"];

/** Whether a top-level module of this name is one the runner or the interpreter imports. */
export function isRunnerModuleName(name: string, extra: ReadonlySet<string> = new Set()): boolean {
  return (
    PYTHON_STDLIB_MODULES.has(name) ||
    RUNNER_MODULES.has(name) ||
    extra.has(name) ||
    RUNNER_PREFIXES.some((p) => name.startsWith(p))
  );
}

/**
 * The top-level modules a test command runs with `-m` (`python3.11 -u -m pytest`, `coverage run
 * -m pytest` → pytest); pytest's own `-m MARKEXPR` is not one.
 */
export function modulesRunWithDashM(testCmd: string): string[] {
  const out = new Set<string>();
  const pattern =
    /(?:^|[\s;&|(/])(?:(?:python|pypy)[\d.]*|coverage\s+run)(?:\s+-(?!m)\S+)*\s+-m\s*([A-Za-z_][\w.]*)/g;
  for (const m of testCmd.matchAll(pattern)) out.add(m[1]!.split(".")[0]!);
  return [...out];
}

const relative = (path: string): string | undefined => {
  let p = path.trim().replace(/^["']|["']$/g, "");
  p = p.replace(/^(\$PWD|\$\{PWD\}|\$\(pwd\)|`pwd`)(\/|$)/, "");
  if (p.startsWith("/workspace")) p = p.slice("/workspace".length);
  else if (p.startsWith("/") || p.startsWith("~") || p.includes("$")) return undefined;
  const parts: string[] = [];
  for (const part of p.split("/")) {
    if (part === "" || part === ".") continue;
    if (part === "..") {
      if (parts.length === 0) return undefined;
      parts.pop();
    } else parts.push(part);
  }
  return parts.join("/");
};

/**
 * Directories of the repository (relative, "" for its root) that the test command puts on
 * sys.path before site-packages: the root, `src`, what it `cd`s into, and its PYTHONPATH entries
 * (taken relative to the root and to those directories).
 */
export function commandPathRoots(testCmd: string): string[] {
  const roots = new Set<string>(["", "src"]);
  const dirs = new Set<string>([""]);
  for (const m of testCmd.matchAll(/(?:^|[\s;&|(])cd\s+("[^"]*"|'[^']*'|[^\s;&|)]+)/g)) {
    const dir = relative(m[1]!);
    if (dir !== undefined) {
      roots.add(dir);
      dirs.add(dir);
    }
  }
  for (const m of testCmd.matchAll(/(?:^|[\s;&|(])PYTHONPATH=("[^"]*"|'[^']*'|[^\s;&|)]*)/g)) {
    for (const entry of m[1]!.replace(/^["']|["']$/g, "").split(":")) {
      if (entry === "" || entry === "$PYTHONPATH" || entry === "${PYTHONPATH}") continue;
      const absolute = entry.startsWith("/");
      for (const dir of absolute ? [""] : dirs) {
        const path = relative(absolute ? entry : `${dir}/${entry}`);
        if (path !== undefined) roots.add(path);
      }
    }
  }
  return [...roots];
}

const TEST_MODULE = /^(test_.*|.*_test|conftest)\.py$/;
const dirOf = (path: string) => (path.includes("/") ? path.slice(0, path.lastIndexOf("/")) : "");
const join = (dir: string, name: string) => (dir === "" ? name : `${dir}/${name}`);

/**
 * The directories pytest puts first on sys.path to import the test files and conftest.py files
 * among `files` ("prepend" import mode, its default): for each, the first directory up from it
 * that holds no `__init__.py`.
 */
export function pytestPathRoots(files: Iterable<string>, present: ReadonlySet<string>): string[] {
  const roots = new Set<string>();
  for (const file of files) {
    const name = file.slice(file.lastIndexOf("/") + 1);
    if (!TEST_MODULE.test(name)) continue;
    let dir = dirOf(file);
    while (dir !== "" && present.has(join(dir, "__init__.py"))) dir = dirOf(dir);
    roots.add(dir);
  }
  return [...roots];
}

/** The module a path is, when it sits directly in `root`, or the package it is in. */
function topLevel(path: string, root: string): { module: string; package: boolean } | undefined {
  if (root !== "" && !path.startsWith(`${root}/`)) return undefined;
  const rest = root === "" ? path : path.slice(root.length + 1);
  const slash = rest.indexOf("/");
  if (slash === -1) {
    const m = /^([A-Za-z_]\w*)\.(?:py|pyc|pyd|so|(?:cpython|abi3|pypy)[\w.-]*\.so)$/.exec(rest);
    return m ? { module: m[1]!, package: false } : undefined;
  }
  const dir = rest.slice(0, slash);
  return /^[A-Za-z_]\w*$/.test(dir) ? { module: dir, package: true } : undefined;
}

export interface ShadowingModule {
  /** A changed path that belongs to the module. */
  path: string;
  /** The module it replaces. */
  module: string;
  /** The directory on sys.path it sits in ("" for the repository's root). */
  root: string;
}

export interface ShadowingInput {
  /** Paths the agent's diff adds or changes (not those it deletes). */
  changed: string[];
  /** Every file of the repository before the agent (the tree the tests start from). */
  baseFiles: ReadonlySet<string>;
  /** Paths the diff deletes. */
  deleted?: string[];
  testCmd: string;
  /** Files the task's test patch touches: the task's own, never the agent's shadow. */
  testFiles?: string[];
}

/**
 * The changed paths that make up a module shadowing one the runner or interpreter imports, each
 * with the module's name and where it sits.
 */
export function shadowingModules(input: ShadowingInput): ShadowingModule[] {
  const deleted = new Set(input.deleted ?? []);
  const after = new Set([...input.baseFiles].filter((f) => !deleted.has(f)));
  for (const p of input.changed) after.add(p);
  for (const p of input.testFiles ?? []) after.add(p);
  const roots = new Set([...commandPathRoots(input.testCmd), ...pytestPathRoots(after, after)]);
  const dashM = new Set(modulesRunWithDashM(input.testCmd));
  const testFiles = new Set(input.testFiles ?? []);
  // Whether the repository had the module there before the agent (then it is the project's own).
  const had = (root: string, module: string) => {
    const base = join(root, module);
    return [`${base}.py`, `${base}.pyc`, `${base}/__init__.py`].some((f) => input.baseFiles.has(f));
  };
  const out: ShadowingModule[] = [];
  for (const path of input.changed) {
    if (testFiles.has(path)) continue;
    // The deepest root first: a path in tests/ is tests/'s module, not the root's package "tests".
    const candidates = [...roots].filter((r) => r === "" || path.startsWith(`${r}/`));
    candidates.sort((a, b) => b.length - a.length);
    for (const root of candidates) {
      const top = topLevel(path, root);
      if (!top || !isRunnerModuleName(top.module, dashM)) continue;
      if (top.package && !after.has(join(join(root, top.module), "__init__.py"))) continue;
      if (had(root, top.module)) continue;
      out.push({ path, module: top.module, root });
      break;
    }
  }
  return out;
}
