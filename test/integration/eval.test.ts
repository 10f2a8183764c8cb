import { spawn, type ChildProcess } from "node:child_process";
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { XMLParser, XMLValidator } from "fast-xml-parser";
import { chromium } from "playwright-core";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import type { AttemptResult } from "../../src/eval/attempt-result.js";
import type { ResultsFile } from "../../src/eval/results-summary.js";
import { LABEL_EVAL_TASK } from "../../src/eval/run-attempt.js";
import { Engine } from "../../src/engine/engine.js";
import { LABEL_STATE } from "../../src/engine/labels.js";
import { git, tempRepo, type TempRepo } from "../helpers/repos.js";

const cli = join(process.cwd(), "dist", "cli", "main.js");
const CHROMIUM = process.env.DRYDOCK_CHROMIUM ?? "/usr/bin/chromium";

const CALC = "def add(a, b):\n    return a - b\n\n\ndef mul(a, b):\n    return a * b\n";
const CALC_TEST = `import unittest

from calc import add, mul


class CalcTest(unittest.TestCase):
    def test_add(self):
        self.assertEqual(add(2, 3), 5)

    def test_mul(self):
        self.assertEqual(mul(2, 3), 6)


if __name__ == "__main__":
    unittest.main()
`;
const EXTRA_TEST = `import unittest

from calc import add


class ExtraTest(unittest.TestCase):
    def test_add_negative(self):
        self.assertEqual(add(-1, -1), -2)
`;

let work: string;
let state: string;
let calc: TempRepo;
let sample: TempRepo;
let gold: string;

interface CliRun {
  code: number | null;
  stderr: string;
  stdout: string;
}

function startCli(args: string[]): { child: ChildProcess; done: Promise<CliRun> } {
  const child = spawn(process.execPath, [cli, ...args], {
    cwd: work,
    env: {
      ...process.env,
      DRYDOCK_STATE_DIR: state,
      DRYDOCK_IMAGE: inject("sandboxImage"),
      OPENAI_API_KEY: "",
      ANTHROPIC_API_KEY: "",
      GEMINI_API_KEY: "",
      GOOGLE_API_KEY: "",
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  child.stdout!.on("data", (d: Buffer) => (stdout += d.toString()));
  child.stderr!.on("data", (d: Buffer) => (stderr += d.toString()));
  const done = new Promise<CliRun>((resolve) =>
    child.on("close", (code) => resolve({ code, stderr, stdout })),
  );
  return { child, done };
}

const runCli = (...args: string[]) => startCli(args).done;

function writeTasks(name: string, tasks: Array<Record<string, unknown>>, extraLines: string[] = []): string {
  const file = join(work, name);
  writeFileSync(file, [...tasks.map((t) => JSON.stringify(t)), ...extraLines].join("\n") + "\n");
  return file;
}

function readResults(out: string): ResultsFile {
  return JSON.parse(readFileSync(join(out, "results.json"), "utf8")) as ResultsFile;
}

function statuses(results: ResultsFile): Record<string, string> {
  return Object.fromEntries(results.tasks.map((t) => [t.id, t.status]));
}

/** Eval boxes this file's runs made (their state directory is this file's): other files run beside it. */
async function evalBoxes(): Promise<number> {
  const engine = await Engine.connect();
  return (await engine.listBoxes(LABEL_EVAL_TASK)).filter((b) => b.labels[LABEL_STATE] === state).length;
}

/** The calc tasks: exit-code grading, test-name grading, and setup plus a hidden test patch. */
function calcTasks(): Array<Record<string, unknown>> {
  const base = { repo: "calc", prompt: "Fix add() so the tests pass", editable_files: ["calc.py"] };
  return [
    { ...base, id: "calc-exit", test_cmd: "python3 -m unittest -v", patch: gold },
    {
      ...base,
      id: "calc-names",
      test_cmd: "python3 -m unittest -v",
      patch_file: "gold.diff",
      fail_to_pass: ["test_calc.CalcTest.test_add"],
      pass_to_pass: ["test_mul (test_calc.CalcTest)"],
    },
    {
      ...base,
      id: "calc-hidden",
      setup: "echo generated > build-stamp.txt",
      test_patch: EXTRA_PATCH(),
      test_cmd: "test -f build-stamp.txt && python3 -m unittest -v test_extra",
      patch: gold,
    },
  ];
}

let extraPatch = "";
const EXTRA_PATCH = () => extraPatch;
const fuzzy = () => gold.replace(/^index .*\n/m, "").replace(" def mul(a, b):", " def mul(x, y):");

beforeAll(() => {
  work = mkdtempSync(join(tmpdir(), "drydock-eval-"));
  state = mkdtempSync(join(tmpdir(), "drydock-eval-state-"));
  calc = tempRepo({ "calc.py": CALC, "test_calc.py": CALC_TEST });
  calc.write("calc.py", CALC.replace("a - b", "a + b"));
  gold = git(calc.path, "diff");
  git(calc.path, "checkout", "-q", "calc.py");
  calc.write("test_extra.py", EXTRA_TEST);
  git(calc.path, "add", "-N", "test_extra.py");
  extraPatch = git(calc.path, "diff");
  rmSync(join(calc.path, "test_extra.py"));
  git(calc.path, "reset", "-q");
  cpSync(calc.path, join(work, "calc"), { recursive: true });
  writeFileSync(join(work, "gold.diff"), gold);
  sample = tempRepo({});
  cpSync(join(process.cwd(), "examples", "sample-repo"), sample.path, { recursive: true });
  sample.commit("sample");
});

afterAll(async () => {
  calc?.[Symbol.dispose]();
  sample?.[Symbol.dispose]();
  rmSync(work, { recursive: true, force: true });
  rmSync(state, { recursive: true, force: true });
  expect(await evalBoxes()).toBe(0);
});

describe("drydock eval", () => {
  const goldOut = () => join(work, "out-gold");

  it("the patch agent resolves every task with the gold patch; a hanging test times out and the rest finish", async () => {
    const file = writeTasks(
      "tasks.jsonl",
      [
        ...calcTasks(),
        { id: "calc-hang", repo: "calc", prompt: "x", test_cmd: "sleep 600", patch: gold, timeout_s: 6 },
        // git apply refuses it (a context line differs, no index line for --3way); patch --fuzz takes it.
        { id: "calc-fuzzy", repo: "calc", prompt: "x", test_cmd: "python3 -m unittest", patch: fuzzy() },
        {
          id: "calc-nopatch",
          repo: "calc",
          prompt: "x",
          test_cmd: "true",
          patch: gold.replace(/a - b/g, "a / b"),
        },
      ],
      ['{"id": "broken", "repo": "calc"}'],
    );
    const started = Date.now();
    const run = await runCli("eval", file, "--agent", "patch", "--concurrency", "2", "--out", goldOut());
    expect(run.code, run.stderr).toBe(2); // the broken line is reported; the others ran
    expect(run.stderr).toMatch(/tasks\.jsonl:7: prompt: is required/);
    expect(run.stderr).toMatch(/6\/6 done · 4 passed · 2 failed · 0 running/);
    expect(Date.now() - started).toBeLessThan(60_000);
    const results = readResults(goldOut());
    expect(statuses(results)).toEqual({
      "calc-exit": "resolved",
      "calc-names": "resolved",
      "calc-hidden": "resolved",
      "calc-hang": "timeout",
      "calc-fuzzy": "resolved",
      "calc-nopatch": "agent_error",
    });
    expect(readFileSync(join(goldOut(), "tasks", "calc-fuzzy", "agent.log"), "utf8")).toMatch(
      /\$ git apply --verbose[\s\S]*\$ git apply --3way[\s\S]*\$ patch --batch --fuzz=3 -p1[\s\S]*applied with patch --fuzz=3/,
    );
    const nopatch = results.tasks.find((t) => t.id === "calc-nopatch")!.attempts[0]!;
    expect(nopatch).toMatchObject({
      phase: "agent",
      error: expect.stringMatching(/the patch .*does not apply/),
    });
    expect(nopatch.tests).toBeUndefined();
    const hang = results.tasks.find((t) => t.id === "calc-hang")!.attempts[0]!;
    expect(hang).toMatchObject({ phase: "tests", error: expect.stringMatching(/within the task's 6 s/) });
    expect(hang.duration_ms).toBeLessThan(20_000);
    const names = results.tasks.find((t) => t.id === "calc-names")!.attempts[0]!;
    expect(names.tests?.grade).toMatchObject({
      by: "test_names",
      reason: "FAIL_TO_PASS 1/1 pass; PASS_TO_PASS 1/1 pass",
    });
    expect(results.invalid_tasks).toEqual([
      expect.objectContaining({ line: 7, field: "prompt" }),
      expect.objectContaining({ line: 7, field: "test_cmd" }),
    ]);
    // The per-task folder: the patch is the agent's change only (not setup's), the logs are there.
    const hidden = join(goldOut(), "tasks", "calc-hidden");
    expect(readFileSync(join(hidden, "patch.diff"), "utf8")).toMatch(/^diff --git a\/calc\.py b\/calc\.py/);
    expect(readFileSync(join(hidden, "patch.diff"), "utf8")).not.toContain("build-stamp");
    expect(readFileSync(join(hidden, "agent.log"), "utf8")).toContain("applied with git apply");
    expect(readFileSync(join(hidden, "test_output.txt"), "utf8")).toMatch(/test_add_negative .* ok/);
    const one = JSON.parse(readFileSync(join(hidden, "result.json"), "utf8")) as AttemptResult;
    expect(one).toMatchObject({ task_id: "calc-hidden", attempt: 1, status: "resolved", agent: "patch" });
  });

  it("writes a junit.xml that parses: a suite per task, a testcase per graded test", () => {
    const xml = readFileSync(join(goldOut(), "junit.xml"), "utf8");
    expect(XMLValidator.validate(xml)).toBe(true);
    const doc = new XMLParser({ ignoreAttributes: false, attributeNamePrefix: "" }).parse(xml);
    expect(doc.testsuites).toMatchObject({ tests: "7", failures: "0", errors: "2" });
    const suites = doc.testsuites.testsuite as Array<{
      name: string;
      testcase: { name: string; error?: { type: string } } | Array<{ name: string }>;
    }>;
    expect(suites.map((s) => s.name)).toEqual([
      "calc-exit",
      "calc-names",
      "calc-hidden",
      "calc-hang",
      "calc-fuzzy",
      "calc-nopatch",
    ]);
    const names = suites[1]!.testcase as Array<{ name: string }>;
    expect(names.map((c) => c.name)).toEqual([
      "test_calc.CalcTest.test_add",
      "test_mul (test_calc.CalcTest)",
    ]);
    expect((suites[3]!.testcase as { error: { type: string } }).error.type).toBe("timeout");
    expect((suites[5]!.testcase as { error: { type: string } }).error.type).toBe("agent_error");
  });

  it("writes a report.html that renders in headless Chromium, sorts, and shows every task's diff, log and output", async () => {
    if (!existsSync(CHROMIUM)) {
      throw new Error(
        `Chromium is not installed at ${CHROMIUM}; the report test needs it. Fix: run \`bash scripts/install-chromium.sh\` (as root on Debian it runs apt-get install -y chromium), or set DRYDOCK_CHROMIUM to a Chromium binary.`,
      );
    }
    const profile = mkdtempSync(join(tmpdir(), "drydock-chromium-"));
    const context = await chromium.launchPersistentContext(profile, {
      executablePath: CHROMIUM,
      headless: true,
      args: [
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--no-first-run",
      ],
    });
    try {
      const page = await context.newPage();
      const problems: string[] = [];
      const requests: string[] = [];
      page.on("pageerror", (e) => problems.push(e.message));
      page.on("console", (m) => void (m.type() === "error" && problems.push(m.text())));
      page.on("request", (r) => requests.push(r.url()));
      const url = `file://${join(goldOut(), "report.html")}`;
      await page.goto(url);
      await page.waitForSelector("body[data-ready=true]");
      const ids = await page.$$eval("tr.task", (rows) => rows.map((r) => r.getAttribute("data-id")));
      expect(ids).toEqual([
        "calc-exit",
        "calc-fuzzy",
        "calc-hang",
        "calc-hidden",
        "calc-names",
        "calc-nopatch",
      ]);
      expect(await page.textContent("#summary")).toMatch(/resolved\s*66\.7%\s*4 of 6 tasks/);
      // Sort by status, then by status descending.
      await page.click('th[data-key="status"]');
      expect(await page.$$eval("tr.task", (rows) => rows.map((r) => r.getAttribute("data-id")))).toEqual([
        "calc-nopatch",
        "calc-exit",
        "calc-fuzzy",
        "calc-hidden",
        "calc-names",
        "calc-hang",
      ]);
      await page.click('th[data-key="status"]');
      expect(await page.getAttribute('th[data-key="status"]', "aria-sort")).toBe("descending");
      await page.click('tr.task[data-id="calc-names"]');
      expect(await page.textContent("pre.body")).toContain("+    return a + b");
      await page.click('button[data-tab="log"]');
      expect(await page.textContent("pre.body")).toContain("applied with git apply");
      await page.click('button[data-tab="tests"]');
      expect(await page.textContent("pre.body")).toMatch(/test_add .* ok/);
      await page.click('tr.task[data-id="calc-hang"]');
      await page.click('button[data-tab="tests"]');
      expect(await page.textContent("pre.body")).toContain("$ sleep 600");
      expect(problems).toEqual([]);
      expect(requests).toEqual([url]);
    } finally {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
    }
  });

  it("an empty patch resolves none, and compare lists the tasks that broke", async () => {
    const file = writeTasks("calc.jsonl", calcTasks());
    mkdirSync(join(work, "no-patches"));
    // Empty answers, each given: the tests run on the unchanged tree (a missing file is no answer).
    for (const id of ["calc-exit", "calc-names", "calc-hidden"])
      writeFileSync(join(work, "no-patches", `${id}.diff`), "");
    const out = join(work, "out-empty");
    const run = await runCli(
      "eval",
      file,
      "--agent",
      "patch",
      "--patches",
      join(work, "no-patches"),
      "--out",
      out,
    );
    expect(run.code, run.stderr).toBe(0);
    expect(statuses(readResults(out))).toEqual({
      "calc-exit": "unresolved",
      "calc-names": "unresolved",
      "calc-hidden": "unresolved",
    });
    const names = readResults(out).tasks.find((t) => t.id === "calc-names")!.attempts[0]!;
    expect(names.tests?.grade?.fail_to_pass?.failed).toEqual(["test_calc.CalcTest.test_add"]);

    const compared = await runCli("eval", "compare", goldOut(), out);
    expect(compared.code).toBe(0);
    expect(compared.stdout).toContain("broken in B (3):");
    expect(compared.stdout).toContain("calc-names  resolved → unresolved");
    expect(compared.stdout).toContain("only in A (3): calc-fuzzy, calc-hang, calc-nopatch");
    const gate = await runCli("eval", "compare", goldOut(), out, "--fail-on-regression", "--json");
    expect(gate.code).toBe(1);
    expect((JSON.parse(gate.stdout) as { broken: unknown[] }).broken).toHaveLength(3);

    // A CI gate on the resolved rate: the same run again (every attempt is already finished).
    const again = ["eval", file, "--agent", "patch", "--patches", join(work, "no-patches"), "--out", out];
    const under = await runCli(...again, "--fail-under", "50%");
    expect(under.code, under.stderr).toBe(1);
    expect(under.stderr).toContain("[eval] resolved 0%, under --fail-under 50%: exit 1");
    expect((await runCli(...again, "--fail-under", "0")).code).toBe(0);
    const bad = await runCli(...again, "--fail-under", "1.5");
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain(
      '--fail-under: "1.5" is not a resolved rate; give a fraction from 0 to 1 (0.8) or a percentage (80%)',
    );
  });

  it("eval report rebuilds the reports from the task folders", async () => {
    const out = join(work, "out-empty");
    rmSync(join(out, "results.json"));
    rmSync(join(out, "report.html"));
    const run = await runCli("eval", "report", out);
    expect(run.code, run.stderr).toBe(0);
    expect(readResults(out).summary).toMatchObject({ tasks: 3, resolved: 0 });
    expect(readFileSync(join(out, "report.html"), "utf8")).toContain("calc-hidden");
  });

  it("the aider agent resolves the scripted task through the offline model", async () => {
    const file = writeTasks("aider.jsonl", [
      {
        id: "greet",
        repo: sample.path,
        prompt: "Make greet() return 'Hello, NAME!' so the tests pass",
        editable_files: ["greet.py"],
        test_cmd: "python3 -m unittest -v",
        fail_to_pass: ["test_greet.GreetTest.test_greets_with_a_comma_and_an_exclamation_mark"],
      },
    ]);
    const out = join(work, "out-aider");
    const run = await runCli("eval", file, "--agent", "aider", "--llm", "offline", "--out", out);
    expect(run.code, run.stderr).toBe(0);
    const results = readResults(out);
    expect(results.run.model).toBe("openai/drydock-offline");
    const greet = results.tasks[0]!.attempts[0]!;
    expect(greet).toMatchObject({ status: "resolved", model: "openai/drydock-offline", llm_requests: 1 });
    expect(greet.tokens.input).toBeGreaterThan(0);
    expect(readFileSync(join(out, "tasks", "greet", "patch.diff"), "utf8")).toContain(
      '+    return f"Hello, {name}!"',
    );
    expect(readFileSync(join(out, "tasks", "greet", "agent.log"), "utf8")).toContain(
      "Applied edit to greet.py",
    );
  });

  it("aider that cannot apply the model's edits is an agent_error, not an unresolved task", async () => {
    const script = join(work, "bad-edit.json");
    const reply = [
      "greet.py",
      "```python",
      "<<<<<<< SEARCH",
      '    return "this line is not in greet.py"',
      "=======",
      '    return "Hello, " + name',
      ">>>>>>> REPLACE",
      "```",
      "",
    ];
    writeFileSync(script, JSON.stringify([{ name: "bad edit", match: "greet", reply }]));
    const file = writeTasks("aider-bad.jsonl", [
      {
        id: "bad-edit",
        repo: sample.path,
        prompt: "Make greet() return 'Hello, NAME!' so the tests pass",
        editable_files: ["greet.py"],
        test_cmd: "python3 -m unittest -v",
      },
    ]);
    const out = join(work, "out-aider-bad");
    const run = await runCli(
      "eval",
      file,
      "--agent",
      "aider",
      "--llm",
      "offline",
      "--offline-script",
      script,
      "--out",
      out,
    );
    expect(run.code, run.stderr).toBe(0);
    const attempt = readResults(out).tasks[0]!.attempts[0]!;
    expect(attempt).toMatchObject({ status: "agent_error", phase: "agent" });
    expect(attempt.error).toMatch(/^aider could not apply the model's edits/);
  });

  it("an agent limit and a test limit of their own: a slow agent stops at its limit and cannot eat the tests' time", async () => {
    const task = { ...calcTasks()[0]!, id: "slow-agent", timeout_s: 3 };
    const file = writeTasks("limits.jsonl", [
      { ...task, id: "agent-limit", agent_timeout_s: 2 },
      // The agent takes 4 s, past the task's 3 s: with limits of their own, the tests still run.
      { ...task, id: "tests-apart", agent_timeout_s: 10, test_timeout_s: 20 },
    ]);
    const out = join(work, "out-limits");
    const run = await runCli("eval", file, "--agent", "command", "--agent-command", "sleep 4", "--out", out);
    expect(run.code, run.stderr).toBe(0);
    const byId = Object.fromEntries(readResults(out).tasks.map((t) => [t.id, t.attempts[0]!]));
    expect(byId["agent-limit"]).toMatchObject({ status: "timeout", phase: "agent" });
    expect(byId["agent-limit"]!.error).toMatch(
      /the agent did not finish within the agent's 2 s \(agent_timeout_s\)/,
    );
    expect(byId["tests-apart"]!.tests).toBeDefined();
    expect(byId["tests-apart"]!.tests!.timed_out).toBe(false);
  });

  it("drydock's count of the tests without the diff is not charged to the task: a gold fix whose suite takes most of timeout_s is resolved", async () => {
    // The suite takes 12 s and the task has 22 s in all: the count and the graded run together
    // would take 24 s, so the count must run on a clock of its own.
    const task = {
      ...calcTasks()[0]!,
      id: "count-off-clock",
      test_cmd: "sleep 12 && python3 -m unittest -v",
      timeout_s: 22,
    };
    const file = writeTasks("count-clock.jsonl", [task]);
    const out = join(work, "out-count-clock");
    const run = await runCli("eval", file, "--agent", "patch", "--out", out);
    expect(run.code, run.stderr).toBe(0);
    expect(statuses(readResults(out))).toEqual({ "count-off-clock": "resolved" });
    const log = readFileSync(join(out, "tasks", "count-off-clock", "test_output.txt"), "utf8");
    expect(log).toMatch(
      /drydock's count: the task's tests without the agent's diff, on a clock of their own; the graded run follows\): \d+ result/,
    );
  });

  it("the command agent works through an MCP endpoint that opens only its own session", async () => {
    const sdk = join(process.cwd(), "node_modules", "@modelcontextprotocol", "sdk", "dist", "esm", "client");
    const agent = join(work, "agent.mjs");
    writeFileSync(
      agent,
      `import { Client } from ${JSON.stringify(`file://${sdk}/index.js`)};
import { StreamableHTTPClientTransport } from ${JSON.stringify(`file://${sdk}/streamableHttp.js`)};
const client = new Client({ name: "agent", version: "1" });
await client.connect(new StreamableHTTPClientTransport(new URL(process.env.DRYDOCK_MCP_URL), {
  requestInit: { headers: { Authorization: "Bearer " + process.env.DRYDOCK_MCP_TOKEN } } }));
const names = (await client.listTools()).tools.map((t) => t.name);
if (names.includes("session_apply") || names.includes("session_create")) process.exit(3);
const other = await client.callTool({ name: "bash", arguments: { command: "true", session_id: "000000000000" } });
if (!other.isError) process.exit(4);
const done = await client.callTool({ name: "bash", arguments: { session_id: process.env.DRYDOCK_SESSION_ID,
  command: "sed -i 's/a - b/a + b/' calc.py" } });
console.log("agent:", process.env.DRYDOCK_TASK_PROMPT, done.structuredContent.exit_code);
await client.close();
`,
    );
    const file = writeTasks("command.jsonl", [calcTasks()[0]!]);
    const out = join(work, "out-command");
    const run = await runCli(
      "eval",
      file,
      "--agent",
      "command",
      "--agent-command",
      `node ${agent}`,
      "--out",
      out,
    );
    expect(run.code, run.stderr).toBe(0);
    expect(statuses(readResults(out))).toEqual({ "calc-exit": "resolved" });
    expect(readFileSync(join(out, "tasks", "calc-exit", "agent.log"), "utf8")).toContain(
      "agent: Fix add() so the tests pass 0",
    );
  });

  it("--attempts 3: each attempt knows its number, and pass@1 and pass@3 are the hand-computed ones", async () => {
    const sdk = join(process.cwd(), "node_modules", "@modelcontextprotocol", "sdk", "dist", "esm", "client");
    const agent = join(work, "attempts-agent.mjs");
    // "sometimes" fixes the bug on attempt 2 only, "always" on every attempt, "never" on none.
    writeFileSync(
      agent,
      `import { Client } from ${JSON.stringify(`file://${sdk}/index.js`)};
import { StreamableHTTPClientTransport } from ${JSON.stringify(`file://${sdk}/streamableHttp.js`)};
const id = process.env.DRYDOCK_TASK_ID, attempt = process.env.DRYDOCK_ATTEMPT;
console.log("attempt", attempt);
if (id === "never" || (id === "sometimes" && attempt !== "2")) process.exit(0);
const client = new Client({ name: "agent", version: "1" });
await client.connect(new StreamableHTTPClientTransport(new URL(process.env.DRYDOCK_MCP_URL), {
  requestInit: { headers: { Authorization: "Bearer " + process.env.DRYDOCK_MCP_TOKEN } } }));
await client.callTool({ name: "bash", arguments: { session_id: process.env.DRYDOCK_SESSION_ID,
  command: "sed -i 's/a - b/a + b/' calc.py" } });
await client.close();
`,
    );
    // Setup prints a token of its own run and leaves an ignored file and a variable the tests need.
    const task = {
      ...calcTasks()[0]!,
      setup:
        "echo token-$(od -An -N8 -tx8 /dev/urandom | tr -d ' ') && mkdir -p .venv && echo made > .venv/marker && echo .venv/ >> .git/info/exclude && export SETUP_VAR=set",
      test_cmd: 'test -f .venv/marker && test "$SETUP_VAR" = set && python3 -m unittest -v',
    };
    const file = writeTasks(
      "attempts.jsonl",
      ["sometimes", "always", "never"].map((id) => ({ ...task, id })),
    );
    const out = join(work, "out-attempts");
    const run = await runCli(
      "eval",
      file,
      ...["--agent", "command", "--agent-command", `node ${agent}`, "--attempts", "3", "--out", out],
    );
    expect(run.code, run.stderr).toBe(0);
    const results = readResults(out);
    const resolvedAttempts = Object.fromEntries(
      results.tasks.map((t) => [t.id, t.attempts.map((a) => [a.attempt, a.resolved])]),
    );
    expect(resolvedAttempts).toEqual({
      sometimes: [
        [1, false],
        [2, true],
        [3, false],
      ],
      always: [
        [1, true],
        [2, true],
        [3, true],
      ],
      never: [
        [1, false],
        [2, false],
        [3, false],
      ],
    });
    // By hand, c of n = 3 per task (1, 3, 0): pass@1 = (1/3 + 1 + 0) / 3; pass@3 = (1 + 1 + 0) / 3.
    expect(results.summary.pass_at_k["1"]).toEqual({ value: 0.4444, tasks: 3 });
    expect(results.summary.pass_at_k["3"]).toEqual({ value: 0.6667, tasks: 3 });
    expect(run.stdout + run.stderr).toMatch(/pass@1 44\.4% · pass@3 66\.7%/);
    const attemptLog = readFileSync(join(out, "tasks", "sometimes", "attempt-2", "agent.log"), "utf8");
    expect(attemptLog).toContain("attempt 2");
    // Setup ran once per task: every attempt's box, and every box its tests ran in, is a fork of
    // the box it ran in, and each log shows that one run's token.
    const tokens = ["sometimes", "always", "never"].map((id) => {
      const logs = [1, 2, 3].flatMap((n) => {
        const dir = join(out, "tasks", id, ...(n === 1 ? [] : [`attempt-${n}`]));
        return ["agent.log", "test_output.txt"].map((f) => readFileSync(join(dir, f), "utf8"));
      });
      for (const text of logs) expect(text).toContain("setup ran once for this task's attempts");
      const seen = new Set(logs.flatMap((text) => text.match(/token-[0-9a-f]{16}/g) ?? []));
      expect(seen.size, id).toBe(1);
      return [...seen][0];
    });
    expect(new Set(tokens).size).toBe(3);
  });

  it("Ctrl-C stops cleanly and keeps what finished; a SIGKILLed run resumes with the same --out", async () => {
    const slow = calcTasks()
      .slice(0, 1)
      .flatMap((t) =>
        ["k1", "k2", "k3"].map((id) => ({ ...t, id, test_cmd: "sleep 1 && python3 -m unittest -v" })),
      );
    const file = writeTasks("slow.jsonl", slow);
    const out = join(work, "out-killed");
    const args = ["eval", file, "--agent", "patch", "--concurrency", "1", "--out", out];
    const resultOf = (id: string) => join(out, "tasks", id, "result.json");
    const waitFor = async (path: string) => {
      const deadline = Date.now() + 60_000;
      while (!existsSync(path) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
      expect(existsSync(path), `${path} never appeared`).toBe(true);
    };

    // Ctrl-C after the first task: the running one is cancelled, its box removed, the report written.
    const first = startCli(args);
    await waitFor(resultOf("k1"));
    first.child.kill("SIGINT");
    const stopped = await first.done;
    expect(stopped.code, stopped.stderr).toBe(130);
    expect(stopped.stderr).toMatch(/run the same command again/);
    expect(await evalBoxes()).toBe(0);
    const partial = readResults(out);
    expect(partial.run.interrupted).toBe(true);
    expect(statuses(partial)).toMatchObject({ k1: "resolved", k3: "not_run" });
    const kept = readFileSync(resultOf("k1"), "utf8");

    // SIGKILL during the next task: nothing is written for it; the box is left for the next run.
    const second = startCli(args);
    await waitFor(resultOf("k2"));
    second.child.kill("SIGKILL");
    await second.done;
    expect(existsSync(resultOf("k3"))).toBe(false);

    const third = await runCli(...args);
    expect(third.code, third.stderr).toBe(0);
    expect(third.stderr).toMatch(/2 attempt\(s\) were already finished/);
    expect(statuses(readResults(out))).toEqual({ k1: "resolved", k2: "resolved", k3: "resolved" });
    expect(readResults(out).run.interrupted).toBeUndefined();
    expect(readFileSync(resultOf("k1"), "utf8")).toBe(kept);

    // --force starts over.
    const again = await runCli(...args, "--force");
    expect(again.code, again.stderr).toBe(0);
    expect(readFileSync(resultOf("k1"), "utf8")).not.toBe(kept);
  });
});
