/**
 * The README's GitHub Actions YAML, run as a runner runs it: each job (each matrix entry) in a
 * container of its own that holds Node.js, npm and git and no drydock (the sandbox image, which
 * has them), its `run:` steps as written with the matrix and `github` context filled in, one
 * after the other in that container, the engine reached through its socket as a runner's job
 * reaches its Docker. `actions/checkout` is a fresh copy of the project, the artifact actions are
 * copies between jobs; any other action fails the test. The container has no network: npm
 * installs the packed tarball's dependencies from a copy of this machine's npm cache.
 */
import { execFileSync, spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { homedir, tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { parse } from "yaml";

const root = new URL("../..", import.meta.url).pathname;
const tmp = mkdtempSync(join(tmpdir(), "drydock-ci-yaml-"));
const docker = (...args: string[]) => execFileSync("docker", args, { encoding: "utf8" }).trim();

interface Step {
  uses?: string;
  run?: string;
  with?: Record<string, string>;
}
interface Job {
  needs?: string | string[];
  strategy?: { matrix: Record<string, Array<string | number>> };
  steps: Step[];
}

/** The YAML block after "GitHub Actions:" in the README. */
function readmeWorkflow(): { jobs: Record<string, Job> } {
  const readme = readFileSync(join(root, "README.md"), "utf8");
  const block = /GitHub Actions:\n\n```yaml\n([\s\S]*?)\n```/.exec(readme);
  expect(block, "the README has no GitHub Actions YAML block").not.toBeNull();
  return parse(block![1]!) as { jobs: Record<string, Job> };
}

const FUNCTIONS = {
  add: ["a - b", "a + b", "add(2, 3), 5"],
  sub: ["a + b", "a - b", "sub(5, 3), 2"],
  mul: ["a + b", "a * b", "mul(2, 4), 8"],
  half: ["a * 2", "a / 2", "half(8), 4"],
} as const;

/** The project a runner checks out: a repository with four broken functions, four tasks, predictions. */
function makeProject(dir: string, wrong: readonly string[]): void {
  const calc = join(dir, "calc");
  mkdirSync(calc, { recursive: true });
  const git = (...args: string[]) =>
    execFileSync("git", ["-c", "user.name=me", "-c", "user.email=me@example.com", ...args], {
      cwd: calc,
      encoding: "utf8",
    });
  const source = (fixed: string | undefined) =>
    Object.entries(FUNCTIONS)
      .map(([name, [bad, good]]) => {
        const args = name === "half" ? "a" : "a, b";
        return `def ${name}(${args}):\n    return ${name === fixed ? good : bad}\n`;
      })
      .join("\n");
  writeFileSync(join(calc, "calc.py"), source(undefined));
  writeFileSync(
    join(calc, "test_calc.py"),
    `import unittest\nfrom calc import ${Object.keys(FUNCTIONS).join(", ")}\n\nclass T(unittest.TestCase):\n` +
      Object.entries(FUNCTIONS)
        .map(([name, [, , check]]) => `    def test_${name}(self):\n        self.assertEqual(${check})\n`)
        .join(""),
  );
  git("init", "-q", "-b", "main");
  git("add", "-A");
  git("commit", "-qm", "init");
  const tasks: string[] = [];
  const preds: string[] = [];
  for (const name of Object.keys(FUNCTIONS)) {
    writeFileSync(join(calc, "calc.py"), source(wrong.includes(name) ? "none" : name));
    const patch = git("diff");
    git("checkout", "-q", "calc.py");
    tasks.push(
      JSON.stringify({
        id: `calc-${name}`,
        repo: "calc",
        prompt: `Fix ${name}() so the tests pass`,
        test_cmd: "python3 -m unittest -v",
        fail_to_pass: [`test_calc.T.test_${name}`],
      }),
    );
    preds.push(JSON.stringify({ instance_id: `calc-${name}`, model_name_or_path: "m", model_patch: patch }));
  }
  writeFileSync(join(dir, "tasks.jsonl"), `${tasks.join("\n")}\n`);
  writeFileSync(join(dir, "preds.jsonl"), `${preds.join("\n")}\n`);
  mkdirSync(join(dir, "vendor"));
  execFileSync("npm", ["pack", "--ignore-scripts", "--pack-destination", join(dir, "vendor")], {
    cwd: root,
    stdio: "ignore",
  });
}

interface StepRun {
  job: string;
  run: string;
  status: number;
  output: string;
}

/** Runs the workflow's jobs in order, each matrix entry in a fresh container; every run step's result. */
function runWorkflow(project: string, label: string): StepRun[] {
  const workflow = readmeWorkflow();
  const artifacts = join(tmp, `${label}-artifacts`);
  mkdirSync(artifacts, { recursive: true });
  const cache = join(tmp, "npm-cache");
  const runs: StepRun[] = [];
  for (const [jobName, job] of Object.entries(workflow.jobs)) {
    const matrix = job.strategy?.matrix ?? {};
    const keys = Object.keys(matrix);
    const entries: Array<Record<string, string>> =
      keys.length === 0 ? [{}] : matrix[keys[0]!]!.map((v) => ({ [keys[0]!]: String(v) }));
    for (const entry of entries) {
      const workspace = join(tmp, `${label}-${jobName}-${Object.values(entry).join("-") || "job"}`);
      const name = `drydock-ci-yaml-${randomBytes(4).toString("hex")}`;
      docker(
        "run",
        "-d",
        "--name",
        name,
        "--network",
        "none",
        "--user",
        "0",
        "--label",
        "drydock.test=ci-yaml",
        "-v",
        "/var/run/docker.sock:/var/run/docker.sock",
        "-v",
        `${workspace}:/github/workspace`,
        "-w",
        "/github/workspace",
        "-v",
        `${cache}:/npm-cache`,
        "-e",
        "npm_config_cache=/npm-cache",
        "-e",
        "npm_config_offline=true",
        "-e",
        "npm_config_update_notifier=false",
        "-e",
        "CI=true",
        // A state directory of its own, so it never takes another drydock's boxes for its own.
        "-e",
        `DRYDOCK_STATE_DIR=/github/state-${name}`,
        inject("sandboxImage"),
        "sleep",
        "infinity",
      );
      try {
        for (const step of job.steps) {
          if (step.uses?.startsWith("actions/checkout@")) {
            cpSync(project, workspace, { recursive: true });
          } else if (step.uses?.startsWith("actions/upload-artifact@")) {
            const fill = (text: string) =>
              text.replace(/\$\{\{\s*matrix\.(\w+)\s*\}\}/g, (_, k: string) => entry[k]!);
            cpSync(join(workspace, fill(step.with!.path!)), join(artifacts, fill(step.with!.name!)), {
              recursive: true,
            });
          } else if (step.uses?.startsWith("actions/download-artifact@")) {
            expect(step.with, "download-artifact with inputs is not emulated here").toBeUndefined();
            cpSync(artifacts, workspace, { recursive: true });
          } else if (step.run !== undefined) {
            const command = step.run
              .replace(/\$\{\{\s*github\.run_id\s*\}\}/g, "4242")
              .replace(/\$\{\{\s*matrix\.(\w+)\s*\}\}/g, (_, k: string) => entry[k]!);
            expect(command, `an expression this runner does not fill: ${command}`).not.toMatch(/\$\{\{/);
            // As a runner runs a step: bash -e, the step's output kept.
            const r = spawnSync("docker", ["exec", name, "bash", "-e", "-c", command], {
              encoding: "utf8",
              timeout: 600_000,
            });
            runs.push({
              job: jobName,
              run: command,
              status: r.status ?? -1,
              output: `${r.stdout}${r.stderr}`,
            });
            if (r.status !== 0) return runs;
          } else {
            throw new Error(`a step this runner does not emulate: ${JSON.stringify(step)}`);
          }
        }
      } finally {
        spawnSync("docker", ["rm", "-f", name], { stdio: "ignore" });
      }
    }
  }
  return runs;
}

describe("the README's GitHub Actions workflow, run as a runner would", () => {
  beforeAll(() => {
    // npm's cache from this machine, copied: the container installs offline and writes to it.
    const source = join(process.env.npm_config_cache ?? join(homedir(), ".npm"), "_cacache");
    expect(existsSync(source), `no npm cache at ${source}: run npm ci first`).toBe(true);
    cpSync(source, join(tmp, "npm-cache", "_cacache"), { recursive: true });
  });
  afterAll(() => {
    // The containers ran as root: what they wrote is root's; rm as this process can.
    rmSync(tmp, { recursive: true, force: true });
    expect(docker("ps", "-aq", "--filter", "label=drydock.test=ci-yaml")).toBe("");
  });

  it(
    "installs the tarball, grades four shards and merges them; the gate passes at 100 %",
    { timeout: 900_000 },
    () => {
      const project = join(tmp, "good");
      makeProject(project, []);
      const runs = runWorkflow(project, "good");
      for (const r of runs) expect(r.status, `${r.job}: ${r.run}\n${r.output}`).toBe(0);
      expect(runs.filter((r) => r.run.startsWith("drydock eval tasks.jsonl"))).toHaveLength(4);
      const merge = runs.find((r) => r.run.startsWith("drydock eval merge"));
      expect(merge?.output).toMatch(/resolved 4\/4 \(100\.0%\)/);
      expect(existsSync(join(tmp, "good-report-job", "results", "results.json"))).toBe(true);
    },
  );

  it("fails the report job under the gate when half the predictions are wrong", { timeout: 900_000 }, () => {
    const project = join(tmp, "half");
    makeProject(project, ["mul", "half"]);
    const runs = runWorkflow(project, "half");
    const merge = runs.at(-1)!;
    expect(merge.run).toMatch(/^drydock eval merge .* --fail-under 80%/);
    expect(merge.status, merge.output).toBe(1);
    expect(merge.output).toMatch(/resolved 2\/4 \(50\.0%\)/);
    for (const r of runs.slice(0, -1)) expect(r.status, `${r.job}: ${r.run}\n${r.output}`).toBe(0);
    expect(existsSync(join(tmp, "half-report-job", "results", "results.json"))).toBe(true);
  });
});
