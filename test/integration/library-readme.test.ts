/**
 * The README's library example, run as written: the TypeScript block compiled by the README's own
 * command line in a folder outside the repository (so nothing npm installs is in it), and run from
 * the repository, in-process, then from the same repository against `drydock
 * serve --http` (its URL and token file in place of the README's), as a user runs the two commands
 * in turn. Compiled with the project's TypeScript 5 and with the TypeScript `npm install typescript`
 * gives today (scripts/install-typescript-latest.sh puts it in a cache). `drydock` resolves to this
 * checkout's build.
 */
import { spawn } from "node:child_process";
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { homedir, tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { spawnHttpServer, stopServer, type SpawnedHttpServer } from "../helpers/http-server.js";
import { git, tempRepo, type TempRepo } from "../helpers/repos.js";

const root = process.cwd();
let scratch: string;
const repos: TempRepo[] = [];
let server: SpawnedHttpServer | undefined;

beforeAll(() => {
  scratch = mkdtempSync(join(tmpdir(), "drydock-library-readme-"));
});
afterAll(async () => {
  await stopServer(server?.child);
  for (const repo of repos) repo[Symbol.dispose]();
  rmSync(scratch, { recursive: true, force: true });
});

/** The README's fenced block of `lang` holding `marker`. */
function block(lang: string, marker: string): string {
  const readme = readFileSync(join(root, "README.md"), "utf8");
  const found = [...readme.matchAll(new RegExp("```" + lang + "\\n([\\s\\S]*?)```", "g"))]
    .map((m) => m[1]!)
    .filter((b) => b.includes(marker));
  expect(found, `exactly one ${lang} block of README.md holds ${marker}`).toHaveLength(1);
  return found[0]!;
}

const LATEST_TS =
  process.env.DRYDOCK_TS_LATEST_DIR ?? join(homedir(), ".cache", "drydock", "typescript-7.0.2");

/** The README's folder outside the repository, where the example and what it needs are installed. */
const README_FOLDER = "~/drydock-fix";
/** The README's repository. */
const README_REPO = "~/calc";

interface Project {
  repo: TempRepo;
  /** The folder outside the repository holding fix.mts and its node_modules. */
  folder: string;
}

/**
 * The failing calc repository of the README, and beside it (outside it) the folder holding the
 * example; that folder's TypeScript and @types/node are the project's own, or those under
 * `toolchain` (a folder with node_modules). The repository ignores nothing.
 */
function calcProject(toolchain = root): Project {
  const repo = tempRepo({
    "calc.py": "def add(a, b):\n    return a - b\n",
    "test_calc.py":
      "import unittest\nfrom calc import add\n\nclass T(unittest.TestCase):\n    def test_add(self):\n        self.assertEqual(add(2, 3), 5)\n",
  });
  repos.push(repo);
  const folder = mkdtempSync(join(scratch, "drydock-fix-"));
  const modules = join(folder, "node_modules");
  mkdirSync(join(modules, ".bin"), { recursive: true });
  mkdirSync(join(modules, "@types"));
  symlinkSync(root, join(modules, "drydock"));
  symlinkSync(join(toolchain, "node_modules", "typescript"), join(modules, "typescript"));
  symlinkSync(join(toolchain, "node_modules", "@types", "node"), join(modules, "@types", "node"));
  symlinkSync(join(toolchain, "node_modules", "typescript", "bin", "tsc"), join(modules, ".bin", "tsc"));
  writeFileSync(join(folder, "fix.mts"), block("ts", "Drydock.local()"));
  return { repo, folder };
}

/** A README line with its folder and repository made the test's. */
function local(line: string, project: Project): string {
  return line.replaceAll(README_FOLDER, project.folder).replaceAll(README_REPO, project.repo.path);
}

function sh(
  line: string,
  cwd: string,
  env: NodeJS.ProcessEnv = {},
): Promise<{ code: number | null; out: string }> {
  const child = spawn("bash", ["-e", "-o", "pipefail", "-c", line], {
    cwd,
    env: { ...process.env, DRYDOCK_POOL: "0", DRYDOCK_STATE_DIR: join(scratch, "state"), ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  child.stdout.on("data", (d: Buffer) => (out += d.toString()));
  child.stderr.on("data", (d: Buffer) => (out += d.toString()));
  return new Promise((resolve) => child.on("close", (code) => resolve({ code, out })));
}

function expectFixed(ran: { code: number | null; out: string }, repo: TempRepo): void {
  expect(ran.code, ran.out).toBe(0);
  expect(ran.out).toMatch(/\[box\] FAILED \(failures=1\)/);
  expect(ran.out).toMatch(/tests exit 1\ntests exit 0\n/);
  expect(ran.out).toMatch(/calc\.py \| 2 \+-/);
  expect(ran.out).toMatch(/committed [0-9a-f]{40} on fix-add/);
  expect(ran.code).toBe(0);
  expect(git(repo.path, "show", "fix-add:calc.py")).toBe("def add(a, b):\n    return a + b\n");
  // The working tree is left as it was, and nothing of the example is in the repository.
  expect(readFileSync(join(repo.path, "calc.py"), "utf8")).toBe("def add(a, b):\n    return a - b\n");
  expect(git(repo.path, "status", "--porcelain", "--untracked-files=all")).toBe("");
}

describe("README library example", () => {
  const lines = () => block("sh", "node ~/drydock-fix/fix.mjs").split("\n");
  const compile = () => lines().find((l) => l.startsWith("npx tsc"))!;
  const runLine = () => lines().find((l) => l.startsWith(`cd ${README_REPO} && node`))!;

  let project: Project | undefined;

  it("installs in a folder outside the repository", () => {
    expect(lines()[0]).toBe(
      `cd ${README_FOLDER} && npm install /path/to/drydock-0.1.0.tgz typescript @types/node`,
    );
    expect(runLine()).toBe(`cd ${README_REPO} && node ${README_FOLDER}/fix.mjs`);
  });

  it("compiles with the README's command under the TypeScript npm installs today, and runs", async () => {
    const tsc = join(LATEST_TS, "node_modules", ".bin", "tsc");
    expect(
      existsSync(tsc),
      `${tsc} is missing: run bash scripts/install-typescript-latest.sh (npm test runs it)`,
    ).toBe(true);
    const made = calcProject(LATEST_TS);
    expect((await sh("npx tsc --version", made.folder)).out).toMatch(/Version 7\./);
    const compiled = await sh(compile(), made.folder);
    expect(compiled.code, compiled.out).toBe(0);
    const ran = await sh(local(runLine(), made), made.folder, { DRYDOCK_URL: "", DRYDOCK_TOKEN: "" });
    expectFixed(ran, made.repo);
  });

  it("compiles with the README's command under TypeScript 5 and runs in-process", async () => {
    const made = calcProject();
    expect((await sh("npx tsc --version", made.folder)).out).toMatch(/Version 5\./);
    const compiled = await sh(compile(), made.folder);
    expect(compiled.code, compiled.out).toBe(0);
    const ran = await sh(local(runLine(), made), made.folder, { DRYDOCK_URL: "", DRYDOCK_TOKEN: "" });
    expectFixed(ran, made.repo);
    project = made;
  });

  it("runs again from the same repository against drydock serve --http with its URL and token file", async () => {
    expect(project, "the in-process run above made the repository").toBeDefined();
    const made = project!;
    const state = join(scratch, "server-state");
    const env: NodeJS.ProcessEnv = { ...process.env, DRYDOCK_STATE_DIR: state };
    delete env.DRYDOCK_TOKEN;
    server = await spawnHttpServer({ repo: made.repo.path, env });
    const readmeLine = lines().find((l) => l.startsWith("DRYDOCK_URL="))!;
    const line = local(readmeLine, made)
      .replace("http://127.0.0.1:8765/mcp", server.url)
      .replace("~/.local/state/drydock/http-token", join(state, "http-token"));
    expect(line).not.toContain("~");
    const ran = await sh(line, made.repo.path);
    expectFixed(ran, made.repo);
  });
});
