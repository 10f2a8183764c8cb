import type { Command } from "commander";
import { writeFile } from "node:fs/promises";
import { resolve } from "node:path";
import { compareRuns, formatComparison } from "../eval/compare-runs.js";
import { loadResults, writeReports } from "../eval/eval-report.js";
import { AGENTS, runEvalCommand, type AgentName } from "../eval/eval-run.js";
import { formatElapsed, ProgressLine } from "../eval/progress-line.js";
import type { ResultsFile } from "../eval/results-summary.js";
import { parseAiderOptions } from "../tools/aider/aider-options.js";
import { InvalidArgumentError } from "../util/errors.js";
import { setLogLevel } from "../util/log.js";

interface EvalFlags {
  agent: string;
  agentCommand?: string;
  patches?: string;
  concurrency?: string;
  attempts: string;
  out: string;
  force?: boolean;
  retryErrors?: boolean;
  timeout: string;
  image?: string;
  env: boolean;
  caCert?: string;
  memoryMb?: string;
  cpus?: string;
  model?: string;
  llm?: string;
  envFile?: string;
  aiderOptions?: string;
  maxLlmRequests?: string;
  maxLlmCostUsd?: string;
  verbose?: boolean;
}

function number(value: string | undefined, flag: string, min: number, integer = false): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!Number.isFinite(n) || n < min || (integer && !Number.isInteger(n))) {
    throw new InvalidArgumentError(
      flag,
      `${value} is not ${integer ? "a whole number" : "a number"} ≥ ${min}`,
    );
  }
  return n;
}

function summaryLine(results: ResultsFile, out: string): string {
  const s = results.summary;
  const tokens = s.tokens.input + s.tokens.output;
  const wall = s.wall_ms ?? s.duration_ms;
  return [
    `resolved ${s.resolved}/${s.tasks} (${(s.resolved_rate * 100).toFixed(1)}%)`,
    results.run.attempts > 1 ? `pass@1 ${(s.pass_at_1 * 100).toFixed(1)}%` : undefined,
    `time ${wall < 60_000 ? `${(wall / 1000).toFixed(1)} s` : formatElapsed(wall)}`,
    tokens ? `${tokens.toLocaleString("en-US")} tokens` : undefined,
    s.cost_usd ? `$${s.cost_usd.toFixed(4)}` : undefined,
  ]
    .filter(Boolean)
    .join(" · ")
    .concat(`\nreport: ${resolve(out, "report.html")}`);
}

export function registerEvalCommand(program: Command): void {
  const evalCommand = program
    .command("eval")
    .description(
      "run coding tasks against an agent, each in its own box, N at a time; write results.json, junit.xml and report.html",
    )
    .argument("[tasks]", "a .jsonl task file, a .yaml file, or a directory of .yaml files")
    .option("--agent <name>", `the agent: ${AGENTS.join(" | ")}`, "aider")
    .option(
      "--agent-command <cmd>",
      "command agent: the program to run (sh -c), with the session's MCP endpoint in its env",
    )
    .option("--patches <dir>", "patch agent: apply <dir>/<task id>.diff instead of the tasks' own patches")
    .option("--concurrency <n>", "boxes at once (default: from cores and memory)")
    .option("--attempts <k>", "attempts per task, each in a fresh box", "1")
    .option("--out <dir>", "results directory; rerunning with the same one resumes", "eval-results")
    .option("--force", "start over: forget the results already in --out")
    .option("--retry-errors", "when resuming, run again attempts that ended in box_error or error")
    .option(
      "--timeout <seconds>",
      "time limit per task (setup, agent and tests) unless the task sets timeout_s",
      "1800",
    )
    .option(
      "--image <image>",
      "sandbox image, and the base of the tasks' environments (default: the one `drydock image build` made)",
    )
    .option(
      "--no-env",
      "ignore environment definitions: tasks without an image use the sandbox image as it is",
    )
    .option(
      "--ca-cert <path>",
      "CA bundle environment builds trust (default: SSL_CERT_FILE / the system bundle)",
    )
    .option("--memory-mb <n>", "memory limit per box in MiB (default 2048)")
    .option("--cpus <n>", "CPU limit per box (default 1)")
    .option(
      "--model <model>",
      "aider model (else DRYDOCK_MODEL, else the default for the host's key, else offline)",
    )
    .option("--llm <mode>", "live | offline | record:FILE | replay:FILE")
    .option("--env-file <path>", ".env file with provider keys (kept on the host)")
    .option("--aider-options <json>", 'aider settings for every task, e.g. \'{"edit_format":"whole"}\'')
    .option("--max-llm-requests <n>", "per-box limit on model requests")
    .option("--max-llm-cost-usd <n>", "per-box limit on model cost in USD")
    .option("--verbose", "log every box and model call on stderr")
    .action(async (tasks: string | undefined, flags: EvalFlags) => {
      if (!tasks) {
        evalCommand.help({ error: true });
        return;
      }
      if (!(AGENTS as readonly string[]).includes(flags.agent)) {
        throw new InvalidArgumentError("--agent", `${flags.agent} is not one of ${AGENTS.join(", ")}`);
      }
      if (!flags.verbose && !process.env.DRYDOCK_LOG_LEVEL) setLogLevel("warning");
      const controller = new AbortController();
      const progress = new ProgressLine(process.stderr);
      let interrupts = 0;
      const interrupt = () => {
        interrupts++;
        if (interrupts === 1) {
          progress.note(
            "[eval] stopping: no new task starts; removing the boxes (Ctrl-C again to quit at once)",
          );
          controller.abort();
        } else {
          process.stderr.write(
            "\n[eval] quitting; boxes left behind are removed by the next drydock run or `drydock sessions prune`\n",
          );
          process.exit(130);
        }
      };
      process.on("SIGINT", interrupt);
      process.on("SIGTERM", interrupt);
      progress.start();
      try {
        const run = await runEvalCommand({
          tasksPath: tasks,
          agent: flags.agent as AgentName,
          agentCommand: flags.agentCommand,
          patches: flags.patches,
          model: flags.model,
          llm: flags.llm,
          envFile: flags.envFile,
          aiderOptions: flags.aiderOptions
            ? parseAiderOptions(flags.aiderOptions, "--aider-options")
            : undefined,
          maxLlmRequests: number(flags.maxLlmRequests, "--max-llm-requests", 0, true),
          maxLlmCostUsd: number(flags.maxLlmCostUsd, "--max-llm-cost-usd", 0),
          concurrency: number(flags.concurrency, "--concurrency", 1, true),
          attempts: number(flags.attempts, "--attempts", 1, true)!,
          out: flags.out,
          force: flags.force,
          retryErrors: flags.retryErrors,
          image: flags.image,
          environment: flags.env,
          caCert: flags.caCert,
          memoryMB: number(flags.memoryMb, "--memory-mb", 128, true),
          cpus: number(flags.cpus, "--cpus", 0.1),
          timeoutS: number(flags.timeout, "--timeout", 1),
          signal: controller.signal,
          onProgress: (counts) => progress.update(counts),
          onNote: (message) => progress.note(`[eval] ${message}`),
        });
        progress.stop();
        process.stderr.write(`[eval] ${summaryLine(run.results, run.out)}\n`);
        if (run.outcome.skipped > 0) {
          process.stderr.write(
            `[eval] ${run.outcome.skipped} attempt(s) were already finished in ${run.out}\n`,
          );
        }
        if (controller.signal.aborted) {
          process.stderr.write(`[eval] stopped; run the same command again to finish the remaining tasks\n`);
          process.exitCode = 130;
        } else if (run.invalidTasks > 0) {
          process.stderr.write(`[eval] ${run.invalidTasks} invalid task(s) in the task file did not run\n`);
          process.exitCode = 2;
        }
      } finally {
        progress.stop();
        process.off("SIGINT", interrupt);
        process.off("SIGTERM", interrupt);
      }
    });

  evalCommand
    .command("report")
    .description("rebuild results.json, junit.xml and report.html of a results directory")
    .argument("<dir>", "the --out directory of a run")
    .action(async (dir: string) => {
      const results = await writeReports(resolve(dir));
      process.stderr.write(`${summaryLine(results, dir)}\n`);
    });

  evalCommand
    .command("compare")
    .description("which tasks changed outcome between two runs (directories or results.json files)")
    .argument("<a>", "the earlier run")
    .argument("<b>", "the later run")
    .option("--json", "print the comparison as JSON")
    .option("--fail-on-regression", "exit 1 when a task resolved in A is not resolved in B")
    .option("--out <file>", "also write the comparison as JSON to a file")
    .action(
      async (a: string, b: string, flags: { json?: boolean; failOnRegression?: boolean; out?: string }) => {
        const comparison = compareRuns(await loadResults(a), await loadResults(b));
        if (flags.out) await writeFile(flags.out, JSON.stringify(comparison, null, 2) + "\n");
        process.stdout.write(
          flags.json
            ? JSON.stringify(comparison, null, 2) + "\n"
            : formatComparison(comparison, { before: a, after: b }),
        );
        if (flags.failOnRegression && comparison.broken.length > 0) process.exitCode = 1;
      },
    );
}
