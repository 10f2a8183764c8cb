/**
 * drydock's count of the tests without the agent's diff runs beside the agent, not after it: the
 * box the tests run in starts with the agent's, the count is taken there while the agent works,
 * and grading waits for it only if it is not done. With `--attempts 2` it is taken once. What the
 * agent writes in its own box does not reach the count. A count that times out, or a box beside
 * the agent that dies during it, still leaves the grading right. Without room on the engine for a
 * second box, grading starts its box after the agent, as before.
 */
import { execFileSync, spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import type { AttemptResult } from "../../src/eval/attempt-result.js";
import { git, tempRepo, type TempRepo } from "../helpers/repos.js";

const cli = join(process.cwd(), "dist", "cli", "main.js");
/** How long the suite takes, in each of its runs (the count's and the graded one). */
const SUITE_S = 4;
const TESTS = `import time
import unittest
from calc import add


class T(unittest.TestCase):
    def test_one(self):
        self.assertTrue(True)

    def test_slow(self):
        time.sleep(${SUITE_S})
`;
const COUNT_LINE = /\$ \(drydock's count: [^\n]*\): (\d+) result\(s\) \[([^\]]+)\]/;
const BESIDE_LINE =
  /^\$ \(grading in a fresh box started beside the agent: .*grading waited ([\d.]+) s for them/m;

let work: string;
let repo: TempRepo;
let gold: string;
let testPatch: string;

function diffOf(edit: () => void): string {
  edit();
  git(repo.path, "add", "-A");
  const diff = git(repo.path, "diff", "--cached");
  git(repo.path, "reset", "-q", "--hard");
  return diff;
}

beforeAll(() => {
  work = mkdtempSync(join(tmpdir(), "drydock-eval-beside-"));
  repo = tempRepo({ "calc.py": "def add(a, b):\n    return a - b\n", "test_calc.py": TESTS });
  // The fix leaves a mark the suite of the hanging tasks looks for: without the diff it hangs.
  gold = diffOf(() => {
    writeFileSync(join(repo.path, "calc.py"), "def add(a, b):\n    return a + b\n");
    writeFileSync(join(repo.path, "fixed.txt"), "fixed\n");
  });
  testPatch = diffOf(() =>
    writeFileSync(
      join(repo.path, "test_calc.py"),
      `${TESTS}\n    def test_add(self):\n        self.assertEqual(add(2, 3), 5)\n`,
    ),
  );
});
afterAll(() => {
  repo[Symbol.dispose]();
  rmSync(work, { recursive: true, force: true });
});

interface Run {
  result: (id: string, attempt?: number) => AttemptResult;
  file: (id: string, name: string, attempt?: number) => string;
}

function runTasks(name: string, tasks: object[], extra: string[], during?: () => void): Promise<Run> {
  const file = join(work, `${name}.jsonl`);
  writeFileSync(file, tasks.map((t) => JSON.stringify(t)).join("\n") + "\n");
  const out = join(work, `${name}-out`);
  const child = spawn(
    process.execPath,
    [cli, "eval", file, "--concurrency", "2", ...extra, "--out", out, "--image", inject("sandboxImage")],
    {
      env: { ...process.env, DRYDOCK_STATE_DIR: join(work, `state-${name}`) },
      stdio: ["ignore", "pipe", "pipe"],
    },
  );
  let stderr = "";
  child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
  const timer = during ? setInterval(during, 250) : undefined;
  const file_ = (id: string, name: string, attempt = 1) =>
    readFileSync(join(out, "tasks", id, ...(attempt > 1 ? [`attempt-${attempt}`] : []), name), "utf8");
  return new Promise((resolve, reject) =>
    child.on("close", (code) => {
      clearInterval(timer);
      if (code !== 0) return reject(new Error(`eval exited ${code}: ${stderr}`));
      resolve({
        result: (id, attempt) => JSON.parse(file_(id, "result.json", attempt)) as AttemptResult,
        file: file_,
      });
    }),
  );
}

/** A command agent that waits `sleepS`, then writes the fix and a test file of its own into its box. */
function slowAgent(sleepS: number): string[] {
  const sdk = join(process.cwd(), "node_modules", "@modelcontextprotocol", "sdk", "dist", "esm", "client");
  const path = join(work, `agent-${sleepS}.mjs`);
  const fix = [
    "printf 'def add(a, b):\\n    return a + b\\n' > calc.py",
    // Three more tests, in the agent's workspace only: the graded run sees them, the count must not.
    `printf 'import unittest\\n\\n\\nclass M(unittest.TestCase):\\n    def test_a(self):\\n        pass\\n\\n    def test_b(self):\\n        pass\\n\\n    def test_c(self):\\n        pass\\n' > test_more.py`,
  ].join(" && ");
  writeFileSync(
    path,
    `import { Client } from ${JSON.stringify(`file://${sdk}/index.js`)};
import { StreamableHTTPClientTransport } from ${JSON.stringify(`file://${sdk}/streamableHttp.js`)};
const client = new Client({ name: "agent", version: "1" });
await client.connect(new StreamableHTTPClientTransport(new URL(process.env.DRYDOCK_MCP_URL), {
  requestInit: { headers: { Authorization: "Bearer " + process.env.DRYDOCK_MCP_TOKEN } } }));
const r = await client.callTool({ name: "bash", arguments: { command: ${JSON.stringify(fix)} } });
if (r.structuredContent.exit_code !== 0) process.exit(5);
await new Promise((resolve) => setTimeout(resolve, ${sleepS * 1000}));
await client.close();
`,
  );
  return ["--agent", "command", "--agent-command", `node ${path}`];
}

function task(id: string, extra: object = {}): object {
  return {
    id,
    repo: repo.path,
    prompt: "Fix add()",
    test_cmd: "python3 -m unittest -v",
    fail_to_pass: ["test_calc.T.test_add"],
    patch: gold,
    test_patch: testPatch,
    environment: "none",
    ...extra,
  };
}

describe("drydock's count beside the agent", () => {
  it("runs while the agent works, once for two attempts, unswayed by what the agent writes; grading does not wait for it", async () => {
    const agentS = 3 * SUITE_S;
    const run = await runTasks("beside", [task("beside")], [...slowAgent(agentS), "--attempts", "2"]);
    const counts = [1, 2].map((attempt) => {
      const result = run.result("beside", attempt);
      const log = run.file("beside", "test_output.txt", attempt);
      expect(result.status, log).toBe("resolved");
      // The test phase holds the graded run, not a count: a count alone takes the suite's time.
      expect(result.timings_ms.tests - result.tests!.duration_ms!, log).toBeLessThan(SUITE_S * 1000);
      expect(log).toMatch(BESIDE_LINE);
      expect(result.tests!.duration_ms!).toBeGreaterThanOrEqual(SUITE_S * 1000);
      // The graded run had the agent's three tests; the count did not.
      expect(result.integrity).toMatchObject({ tests_found: 6, base_tests_found: 3 });
      return COUNT_LINE.exec(log);
    });
    for (const m of counts) expect(m?.[1]).toBe("3");
    const took = counts.filter((m) => m![2]!.startsWith("counted by this attempt"));
    expect(took).toHaveLength(1);
    expect(counts.find((m) => m !== took[0])![2]).toMatch(
      /^counted by attempt beside#[12] of this run at \S+; not run again$/,
    );
  }, 300_000);

  it("without room on the engine for a second box, the box the tests run in starts after the agent, as before", async () => {
    // Each box counted at more than half the engine's memory: the attempt's own fits, a second does not.
    const engineMB =
      Number(execFileSync("docker", ["info", "--format", "{{.MemTotal}}"], { encoding: "utf8" })) / 2 ** 20;
    const memoryMB = String(Math.floor(engineMB * 0.6));
    const run = await runTasks("no-room", [task("no-room")], ["--agent", "patch", "--memory-mb", memoryMB]);
    const log = run.file("no-room", "test_output.txt");
    expect(run.result("no-room").status, log).toBe("resolved");
    expect(log).not.toMatch(BESIDE_LINE);
    expect(log).toMatch(/^\$ \(grading in a fresh box: the task's setup, then the agent's diff\)$/m);
    expect(COUNT_LINE.exec(log)?.slice(1)).toEqual([
      "3",
      "counted by this attempt; kept for the task's other attempts and later runs",
    ]);
  }, 300_000);

  it("a count that runs out of its own time there leaves the grading right", async () => {
    // Without the agent's diff the suite hangs: the count times out, the graded run does not.
    const hang = task("count-timeout", {
      test_cmd: "[ -e fixed.txt ] || sleep 600; python3 -m unittest -v",
      test_timeout_s: 2 * SUITE_S,
    });
    const run = await runTasks("count-timeout", [hang], ["--agent", "patch"]);
    const log = run.file("count-timeout", "test_output.txt");
    expect(run.result("count-timeout").status, log).toBe("resolved");
    expect(run.result("count-timeout").integrity?.flags ?? []).toEqual([]);
    expect(log).toMatch(BESIDE_LINE);
    // Taken again once the agent is gone (it cannot slow that one down); here it hangs again.
    expect(log).toMatch(
      /not counted: this count did not finish in its own time limit[^\n]*\n\$ \(drydock's count ran out of its time beside the agent; taken again now that the agent is done\)\n\$ \(drydock's count: [^\n]*not counted: this count did not finish/,
    );
  }, 300_000);

  it("a box beside the agent that dies during the count is replaced, and the grading is right", async () => {
    const id = "beside-dies";
    const hang = task(id, { test_cmd: "[ -e fixed.txt ] || sleep 20; python3 -m unittest -v" });
    let killed = false;
    const kill = () => {
      if (killed) return;
      const box = execFileSync(
        "docker",
        [
          "ps",
          "-q",
          "--filter",
          `label=drydock.eval.task=${id}`,
          "--filter",
          "label=drydock.eval.beside=agent",
        ],
        { encoding: "utf8" },
      ).trim();
      if (box === "") return;
      killed = true;
      execFileSync("docker", ["kill", box], { stdio: "ignore" });
    };
    const run = await runTasks(id, [hang], ["--agent", "patch"], kill);
    expect(killed).toBe(true);
    const log = run.file(id, "test_output.txt");
    expect(run.result(id).status, log).toBe("resolved");
    expect(log).toMatch(/the box started beside the agent cannot be graded in: /);
    expect(log).toMatch(/^\$ \(grading in a fresh box: the task's setup, then the agent's diff\)$/m);
    expect(COUNT_LINE.exec(log)?.slice(1)).toEqual([
      "3",
      "counted by this attempt; kept for the task's other attempts and later runs",
    ]);
  }, 300_000);
});
