/**
 * Grading cannot be gamed by editing the tests: an agent whose patch only monkeypatches the
 * function inside the test file is graded on the task's own tests (the test patch's files are put
 * back first), and the result says which test files it changed and what it changed outside
 * editable_files.
 */
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { git, tempRepo, type TempRepo } from "../helpers/repos.js";

const cli = join(process.cwd(), "dist", "cli", "main.js");
const TEST_FILE =
  "import unittest\nfrom calc import add\n\n\nclass T(unittest.TestCase):\n    def test_true(self):\n        self.assertTrue(True)\n";

let work: string;
let repo: TempRepo;
let cheat: string;
let gold: string;
let testPatch: string;

/** A diff of one edit in the repository, the repository left as it was. */
function diffOf(edit: () => void): string {
  edit();
  const diff = git(repo.path, "diff");
  git(repo.path, "checkout", "-q", ".");
  return diff;
}

beforeAll(() => {
  work = mkdtempSync(join(tmpdir(), "drydock-eval-integrity-"));
  repo = tempRepo({ "calc.py": "def add(a, b):\n    return a - b\n", "test_calc.py": TEST_FILE });
  // The cheat: the function is replaced inside the test file, before the test imports it.
  cheat = diffOf(() =>
    writeFileSync(
      join(repo.path, "test_calc.py"),
      `import calc\ncalc.add = lambda a, b: a + b\n${TEST_FILE}`,
    ),
  );
  gold = diffOf(() => writeFileSync(join(repo.path, "calc.py"), "def add(a, b):\n    return a + b\n"));
  testPatch = diffOf(() =>
    writeFileSync(
      join(repo.path, "test_calc.py"),
      `${TEST_FILE}\n    def test_add(self):\n        self.assertEqual(add(2, 3), 5)\n`,
    ),
  );
});
afterAll(() => {
  repo[Symbol.dispose]();
  rmSync(work, { recursive: true, force: true });
});

function evalRun(
  patch: string,
  name: string,
  agent: string[] = ["--agent", "patch"],
): Promise<Record<string, unknown>> {
  const tasks = join(work, `${name}.jsonl`);
  const task = {
    id: name,
    repo: repo.path,
    prompt: "Fix add()",
    editable_files: ["calc.py"],
    test_cmd: "python3 -m unittest -v",
    fail_to_pass: ["test_calc.T.test_add"],
    patch,
    test_patch: testPatch,
    environment: "none",
  };
  writeFileSync(tasks, `${JSON.stringify(task)}\n`);
  const out = join(work, `${name}-out`);
  const child = spawn(
    process.execPath,
    [cli, "eval", tasks, ...agent, "--out", out, "--image", inject("sandboxImage")],
    { env: { ...process.env, DRYDOCK_STATE_DIR: join(work, "state") }, stdio: ["ignore", "pipe", "pipe"] },
  );
  let stderr = "";
  child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
  return new Promise((resolve, reject) =>
    child.on("close", (code) => {
      if (code !== 0) return reject(new Error(`eval exited ${code}: ${stderr}`));
      const result = JSON.parse(readFileSync(join(out, "tasks", name, "result.json"), "utf8")) as Record<
        string,
        unknown
      >;
      resolve({
        ...result,
        diff: readFileSync(join(out, "tasks", name, "patch.diff"), "utf8"),
        agentLog: readFileSync(join(out, "tasks", name, "agent.log"), "utf8"),
      });
    }),
  );
}

describe("eval grading integrity", () => {
  it("a patch that only monkeypatches the function in the test file is not resolved, and says so", async () => {
    const result = await evalRun(cheat, "cheat");
    expect(result.status).toBe("unresolved");
    expect(result.integrity).toMatchObject({
      test_files_restored: ["test_calc.py"],
      outside_editable_files: ["test_calc.py"],
      runner_files_restored: [],
      flags: [],
    });
  });

  it("the real fix is resolved, with nothing to report", async () => {
    const result = await evalRun(gold, "gold");
    expect(result.status).toBe("resolved");
    expect(result.integrity).toMatchObject({
      test_files_restored: [],
      outside_editable_files: [],
      runner_files_restored: [],
      flags: [],
    });
  });

  it("a patch that writes into .git (an ignore rule hiding a file from the diff) is refused", async () => {
    const hidden = `${gold}diff --git a/.git/info/exclude b/.git/info/exclude
--- a/.git/info/exclude
+++ b/.git/info/exclude
@@ -0,0 +1 @@
+hack.py
`;
    const result = await evalRun(hidden, "git-dir");
    expect(result.status).toBe("agent_error");
    expect(result.agentLog).toMatch(/refused: the patch changes git's own files \(\.git\/info\/exclude\)/);
    expect(result.diff).toBe("");
  });

  /** A command agent that runs one shell command in its box through the MCP endpoint. */
  function commandAgent(name: string, command: string): string[] {
    const sdk = join(process.cwd(), "node_modules", "@modelcontextprotocol", "sdk", "dist", "esm", "client");
    const path = join(work, `${name}.mjs`);
    writeFileSync(
      path,
      `import { Client } from ${JSON.stringify(`file://${sdk}/index.js`)};
import { StreamableHTTPClientTransport } from ${JSON.stringify(`file://${sdk}/streamableHttp.js`)};
const client = new Client({ name: "agent", version: "1" });
await client.connect(new StreamableHTTPClientTransport(new URL(process.env.DRYDOCK_MCP_URL), {
  requestInit: { headers: { Authorization: "Bearer " + process.env.DRYDOCK_MCP_TOKEN } } }));
const r = await client.callTool({ name: "bash", arguments: { command: ${JSON.stringify(command)} } });
if (r.structuredContent.exit_code !== 0) process.exit(5);
await client.close();
`,
    );
    return ["--agent", "command", "--agent-command", `node ${path}`];
  }

  // Outside the repository, so outside any diff: a module Python loads at every start, from the
  // box user's home, that puts the fix in place before the tests import it.
  const USER_SITE_CHEAT = [
    'site=$(python3 -m site --user-site) && mkdir -p "$site"',
    `printf 'import sys\\nsys.path.insert(0, "/workspace")\\nimport calc\\ncalc.add = lambda a, b: a + b\\n' > "$site/usercustomize.py"`,
  ].join(" && ");

  it("a fix hidden outside the repository does not reach the tests, which run in a fresh box", async () => {
    const result = await evalRun("", "user-site", commandAgent("user-site", USER_SITE_CHEAT));
    expect(result).toMatchObject({ status: "unresolved", graded_in: "fresh box" });
    expect(result.diff).toBe("");
  });

  it("the same fix sways a grading in the agent's own box (--grade-in-agent-box), as that flag warns", async () => {
    const result = await evalRun("", "user-site-agent-box", [
      ...commandAgent("user-site-agent-box", USER_SITE_CHEAT),
      "--grade-in-agent-box",
    ]);
    expect(result).toMatchObject({ status: "resolved", graded_in: "agent box" });
  });

  it("a file the agent hid from git with .git/info/exclude is in its diff all the same", async () => {
    const hide = [
      `printf 'import calc\\ncalc.add = lambda a, b: a + b\\n' > test_aaa.py`,
      "echo test_aaa.py >> .git/info/exclude",
    ].join(" && ");
    const result = await evalRun("", "excluded", commandAgent("excluded", hide));
    expect(result.diff).toMatch(/^diff --git a\/test_aaa\.py b\/test_aaa\.py$/m);
    expect(result.integrity).toMatchObject({ outside_editable_files: ["test_aaa.py"] });
  });
});
