/**
 * `drydock eval`'s flags are checked before a task starts or a results directory is written, and
 * `--offline-script` gives the aider agent's offline model its script.
 */
import { spawn } from "node:child_process";
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { Engine } from "../../src/engine/engine.js";
import { LABEL_STATE } from "../../src/engine/labels.js";
import type { ResultsFile } from "../../src/eval/results-summary.js";
import { writeZebraScript } from "../helpers/offline-script.js";
import { tempRepo } from "../helpers/repos.js";

const cli = join(process.cwd(), "dist", "cli", "main.js");

let work: string;
let state: string;

interface Ran {
  code: number | null;
  stderr: string;
}

function evalCli(args: string[]): Promise<Ran> {
  const child = spawn(process.execPath, [cli, "eval", ...args], {
    cwd: work,
    env: {
      ...process.env,
      DRYDOCK_STATE_DIR: state,
      OPENAI_API_KEY: "",
      ANTHROPIC_API_KEY: "",
      GEMINI_API_KEY: "",
      GOOGLE_API_KEY: "",
    },
    stdio: ["ignore", "ignore", "pipe"],
  });
  let stderr = "";
  child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
  const timer = setTimeout(() => child.kill("SIGKILL"), 120_000);
  return new Promise((resolve) =>
    child.on("close", (code) => {
      clearTimeout(timer);
      resolve({ code, stderr });
    }),
  );
}

beforeAll(() => {
  work = mkdtempSync(join(tmpdir(), "drydock-eval-flags-"));
  state = join(work, "state");
  mkdirSync(state);
  using repo = tempRepo({ "README.md": "hello\n" });
  cpSync(repo.path, join(work, "greeting"), { recursive: true });
  const task = {
    id: "zebra",
    repo: "greeting",
    prompt: "make the zebra change",
    editable_files: ["README.md"],
    test_cmd: "grep -q 'hello from the zebra script' README.md",
  };
  writeFileSync(join(work, "tasks.jsonl"), JSON.stringify(task) + "\n");
  writeFileSync(join(work, "a-file"), "not a directory\n");
  writeZebraScript(join(work, "script.json"));
});

afterAll(async () => {
  rmSync(work, { recursive: true, force: true });
  const engine = await Engine.connect();
  expect((await engine.listBoxes(LABEL_STATE, state)).length).toBe(0);
});

describe("drydock eval's flags", () => {
  it("refuses each flag that cannot work before anything starts: one line naming it, exit 2", async () => {
    const image = inject("sandboxImage");
    const out = () => join(work, "out");
    const cases: Array<[string[], RegExp]> = [
      [["--agent", "robot"], /^--agent: "robot" is not an agent; use one of aider, patch, command/],
      [
        ["--agent-command", "./agent.sh"],
        /^--agent-command: is the program of the command agent; add --agent command/,
      ],
      [["--patches", work], /^--patches: gives the patch agent its answers .*; add --agent patch/],
      [
        ["--agent", "patch", "--patches", join(work, "none")],
        /^--patches: .*none: does not exist; give a folder/,
      ],
      [["--run-id", "a b"], /^--run-id: "a b" is not a run id/],
      [["--test-timeout", "0"], /^--test-timeout: "0" is not a number of seconds above 0/],
      [["--concurrency", "0"], /^--concurrency: "0" is not a whole number of 1 or more/],
      [["--attempts", "two"], /^--attempts: "two" is not a whole number of 1 or more/],
      [["--timeout", "0"], /^--timeout: "0" is not a number of seconds above 0/],
      [["--memory-mb", "1"], /^--memory-mb: "1" is not a whole number from 128 to \d+/],
      [["--cpus", "100000"], /^--cpus: "100000" is not a number from 0\.01 to \d+/],
      [["--max-llm-requests", "-1"], /^--max-llm-requests: "-1" is not a whole number of 0 or more/],
      [["--max-llm-cost-usd", "lots"], /^--max-llm-cost-usd: "lots" is not a number of 0 or more/],
      [["--aider-options", "{not json"], /^--aider-options: /],
      [["--keys-file", join(work, "missing.env")], /^--keys-file: .*missing\.env does not exist/],
      [["--offline-script", join(work, "missing.json")], /^--offline-script: .*missing\.json does not exist/],
      [["--llm", `replay:${join(work, "missing.jsonl")}`], /^--llm: .*missing\.jsonl does not exist/],
      [["--image", "drydock-no-such-image:1"], /^--image: drydock-no-such-image:1 is not in the engine/],
      [["--out", join(work, "a-file")], /^--out: .*a-file is a file; give a directory/],
    ];
    for (const [flags, message] of cases) {
      const args = [
        "tasks.jsonl",
        ...(flags.includes("--out") ? [] : ["--out", out()]),
        ...(flags.includes("--image") ? [] : ["--image", image]),
        ...flags,
      ];
      const ran = await evalCli(args);
      const lines = ran.stderr.trim().split("\n");
      expect(lines[0]!.replace(/^drydock: /, ""), flags.join(" ")).toMatch(message);
      expect(lines.length, ran.stderr).toBe(1);
      expect(ran.code, flags.join(" ")).toBe(2);
      expect(existsSync(out()), flags.join(" ")).toBe(false);
    }
    const missing = await evalCli(["no-such-tasks.jsonl", "--out", out()]);
    expect(missing.stderr).toMatch(/^drydock: TASKS: .*no-such-tasks\.jsonl does not exist/);
    expect(missing.code).toBe(2);
    const noCommand = await evalCli(["tasks.jsonl", "--agent", "command", "--out", out(), "--image", image]);
    expect(noCommand.stderr).toMatch(/^drydock: --agent-command: the command agent needs the program to run/);
    expect(noCommand.code).toBe(2);
    for (const [args, message] of [
      [
        ["compare", join(work, "no-a"), work],
        /^drydock: A: .*no-a does not exist; give a run's --out directory/,
      ],
      [["compare", work, join(work, "no-b")], /^drydock: B: .*no-b does not exist/],
      [["report", join(work, "no-run")], /^drydock: DIR: .*no-run does not exist/],
    ] as const) {
      const ran = await evalCli([...args]);
      expect(ran.stderr, args.join(" ")).toMatch(message);
      expect(ran.code, args.join(" ")).toBe(2);
    }
    expect(readdirSync(state)).toEqual([]);
  });
});

describe("drydock eval --offline-script", () => {
  it("gives the aider agent's offline model the script", async () => {
    const out = join(work, "out-zebra");
    const ran = await evalCli([
      "tasks.jsonl",
      "--image",
      inject("sandboxImage"),
      "--no-env",
      "--llm",
      "offline",
      "--offline-script",
      join(work, "script.json"),
      "--out",
      out,
    ]);
    expect(ran.code, ran.stderr).toBe(0);
    const results = JSON.parse(readFileSync(join(out, "results.json"), "utf8")) as ResultsFile;
    expect(results.tasks.map((t) => [t.id, t.status])).toEqual([["zebra", "resolved"]]);
  });
});
