import { applyFailUnder } from "./eval-gate.js";
import { Option, type Command } from "commander";
import { ALLOW_BASE_IMAGE_HELP, checkAllowBaseImages, collectBaseImage } from "./base-image-flag.js";
import { PULL_HELP, checkPullFlag } from "./pull-flag.js";
import { resolve } from "node:path";
import { AGENTS, runEvalCommand } from "../eval/eval-run.js";
import { ProgressLine } from "../eval/progress-line.js";
import { setLogLevel } from "../util/log.js";
import { DEFAULT_SWEBENCH_TEST_CMD } from "../eval/swebench-rows.js";
import { validateTasks } from "../eval/validate-tasks.js";
import { asFlagError } from "./flag-checks.js";
import { textTable } from "./text-table.js";
import {
  checkEvalFlags,
  collect,
  INSTANCE_IDS_HELP,
  TASK_ID_HELP,
  type EvalFlags as CheckedFlags,
} from "./eval-flags.js";
import { registerEvalResultCommands, summaryLine } from "./eval-results-commands.js";
import { KEYS_FILE_HELP } from "./keys-file-flag.js";
import { RUNTIME_HELP } from "./runtime-flag.js";
import { printErr, printJson, printOut, progressStream } from "./terminal-out.js";

interface EvalFlags extends CheckedFlags {
  force?: boolean;
  retryErrors?: boolean;
  setupPerAttempt?: boolean;
  env: boolean;
  caCert?: string;
  allowBaseImage?: string[];
  pull?: string;
  model?: string;
  verbose?: boolean;
  swebenchTestCmd?: string;
}

export function registerEvalCommand(program: Command): void {
  const evalCommand = program
    .command("eval")
    // `eval validate --out X`: options after a subcommand are the subcommand's, not eval's.
    .enablePositionalOptions()
    .description(
      "run coding tasks against an agent, each in its own box, N at a time; write results.json, junit.xml and report.html",
    )
    .argument("[tasks]", "a .jsonl task file, a .yaml file, or a directory of .yaml files")
    .option("--agent <name>", `the agent: ${AGENTS.join(" | ")}`, "aider")
    .option(
      "--agent-command <cmd>",
      "command agent: the program to run (sh -c), with the session's MCP endpoint in its env",
    )
    .option(
      "--patches <dir|file>",
      "patch agent: the answers to grade instead of the tasks' own patches: a folder of <task id>.diff files, or a SWE-bench predictions file (.jsonl or .json)",
    )
    .option("--concurrency <n>", "boxes at once (default: from cores and memory)")
    .option(
      "--attempts <k>",
      "attempts per task, each in a box of its own; the task's setup runs once and the attempts' boxes are forks of the box it ran in",
      "1",
    )
    .option(
      "--setup-per-attempt",
      "with --attempts: run the task's setup in every attempt's box instead (for a setup that leaves what it installs outside /workspace)",
    )
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
    .option("--allow-base-image <ref>", ALLOW_BASE_IMAGE_HELP, collectBaseImage, [] as string[])
    .option("--pull <when>", `${PULL_HELP}; a task's own pull wins`, "missing")
    .option(
      "--agent-timeout <seconds>",
      "the agent's own time limit, from when it starts, unless the task sets agent_timeout_s",
    )
    .option(
      "--test-timeout <seconds>",
      "the tests' own time limit, from when they start (a slow agent cannot eat it), unless the task sets test_timeout_s",
    )
    .option(
      "--grade-in-agent-box",
      "run the tests in the agent's own box instead of a fresh one (faster; but what the agent left outside its diff can sway them)",
    )
    .option(
      "--integrity <mode>",
      "strict: an attempt flagged by the integrity checks (it changed the test runner's files, its tests report far fewer results than without it) is not resolved; lenient: flagged, but the tests decide (trusted agents only)",
      "strict",
    )
    .option(
      "--grading <mode>",
      "swebench: as SWE-bench's harness grades and reports (a skipped PASS_TO_PASS test is maintained, empty patches are not run, no report.json without a verdict); strict: a skipped test does not pass, empty answers are graded (default: swebench for SWE-bench rows, strict for drydock tasks)",
    )
    .option("--instance-ids <ids...>", INSTANCE_IDS_HELP)
    .option("--task <id>", TASK_ID_HELP, collect)
    .option(
      "--shard <k/n>",
      "run part K of N of the task file (every N-th task from the K-th), for N CI jobs; put them together with eval merge",
    )
    .option(
      "--repos <dir>",
      "SWE-bench rows: the folder holding local clones, as DIR/owner__name or DIR/owner/name (repeatable)",
      collect,
    )
    .option(
      "--repo <owner/name=path>",
      "SWE-bench rows: the local clone of one repository (repeatable)",
      collect,
    )
    .option(
      "--swebench-test-cmd <template>",
      `SWE-bench rows: the test command, {test_files} / {test_modules} from test_patch (default: ${DEFAULT_SWEBENCH_TEST_CMD})`,
    )
    .option(
      "--run-id <id>",
      "names the run in every report (default: kept from --out, else made from the time)",
    )
    .option(
      "--agent-version <v>",
      "the agent's version, shown in every report (default: aider's in drydock's image)",
    )
    .option("--memory-mb <n>", "memory limit per box in MiB (default 2048)")
    .option("--cpus <n>", "CPU limit per box (default 1)")
    .option("--runtime <name>", RUNTIME_HELP)
    .option(
      "--model <model>",
      "aider model (else DRYDOCK_MODEL, else the default for the host's key, else offline)",
    )
    .option("--llm <mode>", "live | offline | record:FILE | replay:FILE")
    .option("--keys-file <path>", KEYS_FILE_HELP)
    .addOption(new Option("--env-file <path>").hideHelp())
    .option(
      "--offline-script <file>",
      "the offline model's script (default: DRYDOCK_OFFLINE_SCRIPT, else the built-in one)",
    )
    .option("--aider-options <json>", 'aider settings for every task, e.g. \'{"edit_format":"whole"}\'')
    .option("--max-llm-requests <n>", "per-box limit on model requests")
    .option("--max-llm-cost-usd <n>", "per-box limit on model cost in USD")
    .option(
      "--engine <url>",
      "run on this Docker engine or Kubernetes namespace (repeatable; unix:///path, tcp://host:port, or kubernetes:NAMESPACE?context=NAME&kubeconfig=PATH&load=COMMAND; default DOCKER_HOST or the socket): attempts go where memory is free, and on a cluster where its scheduler puts them",
      collect,
    )
    .option(
      "--engine-tls-dir <dir>",
      "ca.pem, cert.pem and key.pem for tcp:// engines, as DOCKER_CERT_PATH (or per engine: tcp://host:port?tls=DIR)",
    )
    .option("--fail-under <rate>", "exit 1 when the resolved rate is below RATE (0.8 or 80%), for a CI gate")
    .option("--verbose", "log every box and model call on stderr")
    .action(async (tasks: string | undefined, flags: EvalFlags) => {
      if (!tasks) {
        evalCommand.help({ error: true });
        return;
      }
      const checked = await checkEvalFlags(tasks, flags);
      // Every box of the run is made with it: Box.create takes DRYDOCK_RUNTIME when told nothing.
      process.env.DRYDOCK_RUNTIME = checked.runtime;
      if (!flags.verbose && !process.env.DRYDOCK_LOG_LEVEL) setLogLevel("warning");
      const controller = new AbortController();
      const progress = new ProgressLine(progressStream());
      let interrupts = 0;
      const interrupt = () => {
        interrupts++;
        if (interrupts === 1) {
          progress.note(
            "[eval] stopping: no new task starts; removing the boxes (Ctrl-C again to quit at once)",
          );
          controller.abort();
        } else {
          printErr(
            "\n[eval] quitting; boxes left behind are removed by the next drydock run or `drydock sessions prune`\n",
          );
          process.exit(130);
        }
      };
      process.on("SIGINT", interrupt);
      process.on("SIGTERM", interrupt);
      progress.start();
      try {
        // What runEvalCommand refuses before anything runs (an --out holding another run, a task
        // file with no task) is a usage error: exit 2, like the flags checked here.
        const run = await asFlagError(() =>
          runEvalCommand({
            tasksPath: tasks,
            agent: checked.agent,
            agentCommand: flags.agentCommand,
            patches: checked.patches,
            model: flags.model,
            llm: flags.llm,
            envFile: checked.keysFile,
            offlineScript: checked.offlineScript,
            aiderOptions: checked.aiderOptions,
            maxLlmRequests: checked.maxLlmRequests,
            maxLlmCostUsd: checked.maxLlmCostUsd,
            concurrency: checked.concurrency,
            attempts: checked.attempts,
            out: flags.out,
            force: flags.force,
            retryErrors: flags.retryErrors,
            setupPerAttempt: flags.setupPerAttempt,
            image: flags.image,
            environment: flags.env,
            caCert: flags.caCert,
            allowBaseImages: checkAllowBaseImages(flags.allowBaseImage),
            pull: checkPullFlag(flags.pull),
            memoryMB: checked.memoryMB,
            cpus: checked.cpus,
            timeoutS: checked.timeoutS,
            agentTimeoutS: checked.agentTimeoutS,
            testTimeoutS: checked.testTimeoutS,
            gradeInAgentBox: flags.gradeInAgentBox,
            integrity: checked.integrity,
            grading: checked.grading,
            instanceIds: checked.instanceIds,
            runId: checked.runId,
            clones: checked.clones,
            shard: checked.shard,
            swebenchTestCmd: flags.swebenchTestCmd,
            agentVersion: flags.agentVersion,
            engines: flags.engine,
            engineTlsDir: flags.engineTlsDir,
            signal: controller.signal,
            onProgress: (counts) => progress.update(counts),
            onNote: (message) => progress.note(`[eval] ${message}`),
          }),
        );
        progress.stop();
        printErr(`[eval] ${summaryLine(run.results, run.out)}\n`);
        if (run.outcome.skipped > 0) {
          printErr(`[eval] ${run.outcome.skipped} attempt(s) were already finished in ${run.out}\n`);
        }
        if (controller.signal.aborted) {
          printErr(`[eval] stopped; run the same command again to finish the remaining tasks\n`);
          process.exitCode = 130;
        } else if (run.invalidTasks > 0) {
          printErr(`[eval] ${run.invalidTasks} invalid task(s) in the task file did not run\n`);
          process.exitCode = 2;
        } else if (checked.failUnder !== undefined) {
          applyFailUnder(run.results.summary.resolved_rate, checked.failUnder);
        }
      } finally {
        progress.stop();
        process.off("SIGINT", interrupt);
        process.off("SIGTERM", interrupt);
      }
    });

  evalCommand
    .command("validate")
    .description(
      "check each task grades something: FAIL_TO_PASS fail and PASS_TO_PASS pass without a fix, all pass with the gold patch",
    )
    .argument("<tasks>", "a task file (drydock tasks or SWE-bench rows) or a directory of .yaml files")
    .option("--out <dir>", "where the two runs and validation.json go; rerunning resumes", "eval-validation")
    .option("--force", "start over: forget the results already in --out")
    .option("--concurrency <n>", "boxes at once (default: from cores and memory)")
    .option("--timeout <seconds>", "time limit per task run unless the task sets timeout_s", "1800")
    .option("--test-timeout <seconds>", "the tests' own time limit unless the task sets test_timeout_s")
    .option("--repos <dir>", "SWE-bench rows: the folder holding local clones (repeatable)", collect)
    .option(
      "--repo <owner/name=path>",
      "SWE-bench rows: the local clone of one repository (repeatable)",
      collect,
    )
    .option("--swebench-test-cmd <template>", "SWE-bench rows: the test command (see drydock eval --help)")
    .option("--image <image>", "sandbox image, and the base of the tasks' environments")
    .option("--no-env", "ignore environment definitions")
    .option("--ca-cert <path>", "CA bundle environment builds trust")
    .option("--allow-base-image <ref>", ALLOW_BASE_IMAGE_HELP, collectBaseImage, [] as string[])
    .option("--pull <when>", `${PULL_HELP}; a task's own pull wins`, "missing")
    .option("--memory-mb <n>", "memory limit per box in MiB (default 2048)")
    .option("--cpus <n>", "CPU limit per box (default 1)")
    .option("--runtime <name>", RUNTIME_HELP)
    .option("--instance-ids <ids...>", INSTANCE_IDS_HELP)
    .option("--task <id>", TASK_ID_HELP, collect)
    .option("--json", "print the validation as JSON on stdout")
    .action(async (tasks: string, flags: EvalFlags & { json?: boolean }) => {
      const checked = await checkEvalFlags(tasks, { ...flags, agent: "patch", attempts: "1" });
      // Every box of the run is made with it: Box.create takes DRYDOCK_RUNTIME when told nothing.
      process.env.DRYDOCK_RUNTIME = checked.runtime;
      if (!process.env.DRYDOCK_LOG_LEVEL) setLogLevel("warning");
      const controller = new AbortController();
      const stop = () => controller.abort();
      process.on("SIGINT", stop);
      const progress = new ProgressLine(progressStream());
      progress.start();
      try {
        const validation = await validateTasks({
          tasksPath: tasks,
          concurrency: checked.concurrency,
          out: resolve(flags.out),
          force: flags.force,
          image: flags.image,
          environment: flags.env,
          caCert: flags.caCert,
          allowBaseImages: checkAllowBaseImages(flags.allowBaseImage),
          pull: checkPullFlag(flags.pull),
          memoryMB: checked.memoryMB,
          cpus: checked.cpus,
          timeoutS: checked.timeoutS,
          testTimeoutS: checked.testTimeoutS,
          clones: checked.clones,
          swebenchTestCmd: flags.swebenchTestCmd,
          instanceIds: checked.instanceIds,
          signal: controller.signal,
          onStage: (stage) =>
            progress.note(
              stage === "base"
                ? "[validate] 1/2: each task without a fix (its tests must fail)"
                : "[validate] 2/2: each task with its gold patch (its tests must pass)",
            ),
          onProgress: (counts) => progress.update(counts),
          onNote: (message) => progress.note(`[validate] ${message}`),
        });
        progress.stop();
        if (flags.json) printJson(validation, 2);
        else {
          printOut(
            textTable([
              ["TASK", "VALID", "WITHOUT FIX", "WITH GOLD", "WHY NOT"],
              ...validation.tasks.map((t) => [
                t.id,
                t.valid ? "yes" : "NO",
                t.base_status ?? "-",
                t.gold_status ?? "-",
                t.problems.join("; "),
              ]),
            ]),
          );
        }
        printErr(
          `[validate] ${validation.valid} valid, ${validation.invalid} invalid; ${resolve(flags.out, "validation.json")}\n`,
        );
        if (validation.invalid > 0) process.exitCode = 1;
        else if (validation.invalidTasks > 0) process.exitCode = 2;
      } finally {
        progress.stop();
        process.off("SIGINT", stop);
      }
    });
  registerEvalResultCommands(evalCommand);
}
