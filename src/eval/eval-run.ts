/**
 * `drydock eval TASKS`: load the tasks, make the agent, run every attempt, write the reports.
 * The command line parses flags and handles signals; everything else is here.
 */
import { randomBytes } from "node:crypto";
import { join, resolve } from "node:path";
import type { BoxEngine } from "../engine/box-engine.js";
import { connectEngine, dockerEngine } from "../engine/connect-engine.js";
import { Engine } from "../engine/engine.js";
import { isKubernetesTarget } from "../engine/kubernetes/kubernetes-target.js";
import { loadProviderKeys, secretRedactor, secretValues } from "../gateway/index.js";
import { DEFAULT_LIMITS } from "../sandbox/box-profile.js";
import { readySandboxImage, sandboxAiderVersion } from "../sandbox/sandbox-image.js";
import { EnvironmentImages } from "../environment/environment-images.js";
import { ImagePulls, sandboxImagePresent, type PullMode } from "../environment/image-pulls.js";
import { checkServesAsBox } from "../environment/serves-as-box.js";
import { repoDigestOf } from "../engine/engine.js";
import { parseImageReference } from "../engine/image-reference.js";
import type { AttemptEnv } from "./run-attempt.js";
import { stringify } from "yaml";
import { TaskStackStore } from "../tasks/task-stack-store.js";
import { aiderServiceFromOptions } from "../tools/aider/aider-config.js";
import type { AiderOptions } from "../tools/aider/aider-options.js";
import { InvalidArgumentError } from "../util/errors.js";
import { addLogRedactor } from "../util/log.js";
import { drydockVersion } from "../util/project-root.js";
import { stateDir } from "../util/paths.js";
import { AiderAgent } from "./aider-agent.js";
import { RESULT_SCHEMA_VERSION } from "./attempt-result.js";
import { CommandAgent } from "./command-agent.js";
import { defaultConcurrency } from "./default-concurrency.js";
import type { EvalAgent } from "./eval-agent.js";
import { writeReports } from "./eval-report.js";
import { runEval, type EvalRunOutcome } from "./eval-runner.js";
import { MeteredAiderService } from "./metered-aider-service.js";
import { PatchAgent } from "./patch-agent.js";
import type { Predictions } from "./predictions.js";
import type { CloneMap } from "./swebench-rows.js";
import { settingsDiffer, shardOf, taskSetKey, type Shard } from "./shards.js";
import type { ProgressCounts } from "./progress-line.js";
import { readAttempts, readRunInfo, writeRunInfo, type RunInfo } from "./results-dir.js";
import { environmentImagesOf, type ResultsFile } from "./results-summary.js";
import { loadTasks } from "./task-file.js";
import { formatProblem, type TaskProblem } from "./task-parse.js";
import { checkInstanceIds } from "./instance-ids.js";
import type { EvalTask } from "./eval-task.js";
import { TaskMcpEndpoint } from "./task-mcp-endpoint.js";
import type { IntegrityMode } from "./test-integrity.js";
import type { GradingMode } from "./grade.js";
import { terminalText } from "../util/terminal-text.js";

export const AGENTS = ["aider", "patch", "command"] as const;
export type AgentName = (typeof AGENTS)[number];
export const DEFAULT_TIMEOUT_S = 1800;

/** A run id from the time: 20261123-221500-3f9a (sorts by time, unique enough per machine). */
export function newRunId(now = new Date()): string {
  const stamp = now.toISOString().replace(/[-:]/g, "").replace("T", "-").slice(0, 15);
  return `${stamp}-${randomBytes(2).toString("hex")}`;
}

export interface EvalOptions {
  tasksPath: string;
  agent: AgentName;
  /** command agent: the program, run with `sh -c`. */
  agentCommand?: string;
  /** `--shard K/N`: run only this part of the task file. */
  shard?: Shard;
  /** `--instance-ids`: run only these tasks of the file (an unknown id is an error). */
  instanceIds?: string[];
  /** Local clones for SWE-bench rows (`--repos`, `--repo`). */
  clones?: CloneMap;
  /** The test command of SWE-bench rows that carry none; `{test_files}` / `{test_modules}` are filled in. */
  swebenchTestCmd?: string;
  /** Names the run in its reports; default: the previous run's id in --out, else made from the time. */
  runId?: string;
  /** The agent's version, for reports (default: the aider drydock's own image installs). */
  agentVersion?: string;
  /** patch agent: predictions (a folder of `<id>.diff` files or a predictions file) instead of the tasks' patches. */
  patches?: Predictions;
  model?: string;
  llm?: string;
  envFile?: string;
  /** The offline model's script (default: DRYDOCK_OFFLINE_SCRIPT, else the built-in one). */
  offlineScript?: string;
  aiderOptions?: AiderOptions;
  maxLlmRequests?: number;
  maxLlmCostUsd?: number;
  concurrency?: number;
  attempts: number;
  out: string;
  force?: boolean;
  retryErrors?: boolean;
  /** See EvalRunOptions.setupPerAttempt. */
  setupPerAttempt?: boolean;
  image?: string;
  /** Build and use the tasks' environments (default true; `--no-env` turns it off). */
  environment?: boolean;
  caCert?: string;
  /** Images environments may build on besides the sandbox image (`--allow-base-image`). */
  allowBaseImages?: string[];
  /**
   * When tasks' `image` (and images `allowBaseImages` covers) are pulled (`--pull`; default
   * missing); a task's own `pull` wins.
   */
  pull?: PullMode;
  memoryMB?: number;
  cpus?: number;
  timeoutS?: number;
  /** The agent's and the tests' own limits for tasks that set none (see the task fields). */
  agentTimeoutS?: number;
  testTimeoutS?: number;
  /** `--grade-in-agent-box`: the tests run in the agent's box, not a fresh one (see AttemptEnv). */
  gradeInAgentBox?: boolean;
  /** `--integrity`: how flagged attempts count (default "strict": never resolved). */
  integrity?: IntegrityMode;
  /** `--grading`: every task graded this way (default: SWE-bench rows `swebench`, other tasks `strict`). */
  grading?: GradingMode;
  /** Run the tests on empty answers even under SWE-bench grading (`eval validate` without a fix). */
  gradeEmptyAnswers?: boolean;
  /**
   * `--engine`: the engines to run on (unix:// or tcp:// URLs, see engine-address.ts); default
   * the one DOCKER_HOST or the socket names. The first is where images are found and built.
   */
  engines?: string[];
  /** `--engine-tls-dir`: ca.pem, cert.pem and key.pem for tcp:// engines without a `?tls=` of their own. */
  engineTlsDir?: string;
  signal: AbortSignal;
  onProgress?: (counts: ProgressCounts) => void;
  onNote?: (message: string) => void;
}

export interface EvalRun {
  results: ResultsFile;
  outcome: EvalRunOutcome;
  invalidTasks: number;
  out: string;
}

export async function runEvalCommand(options: EvalOptions): Promise<EvalRun> {
  const note = options.onNote ?? (() => undefined);
  const out = resolve(options.out);
  if (options.agent === "command" && !options.agentCommand) {
    throw new InvalidArgumentError(
      "--agent-command",
      "the command agent needs the program to run, e.g. --agent-command './my-agent.sh'",
    );
  }
  const loaded = await loadTasks(options.tasksPath, {
    clones: options.clones,
    swebenchTestCmd: options.swebenchTestCmd,
  });
  for (const w of loaded.warnings) note(`warning: ${formatProblem(w)}`);
  if (loaded.tasks.length === 0 && loaded.problems.length === 0) {
    throw new InvalidArgumentError("TASKS", `${options.tasksPath} holds no task`);
  }

  // `--instance-ids` takes tasks of the file (rows that could not run included) before a shard
  // takes its part of them.
  const chosen = options.instanceIds ? new Set(options.instanceIds) : undefined;
  if (options.instanceIds) {
    checkInstanceIds(
      options.instanceIds,
      [...loaded.tasks.map((t) => t.id), ...loaded.problems.flatMap((p) => p.id ?? [])],
      options.tasksPath,
    );
  }
  const selected = chosen ? loaded.tasks.filter((t) => chosen.has(t.id)) : loaded.tasks;
  const problems = chosen
    ? loaded.problems.filter((p) => p.id === undefined || chosen.has(p.id))
    : loaded.problems;
  const tasks = options.shard ? shardOf(selected, options.shard) : selected;
  for (const p of problems) note(`invalid task: ${formatProblem(p)}`);
  if (options.patches) {
    // Answers for no task of the file: a typo in an id, or predictions of another dataset.
    const known = new Set([...loaded.tasks.map((t) => t.id), ...loaded.problems.flatMap((p) => p.id ?? [])]);
    const stray = options.patches.ids.filter((id) => !known.has(id));
    if (stray.length > 0) {
      note(
        `warning: ${stray.length} prediction(s) in ${options.patches.path} answer no task of ${options.tasksPath}: ${stray.slice(0, 5).join(", ")}${stray.length > 5 ? ", …" : ""}`,
      );
    }
  }
  const previous = await readRunInfo(out);
  if (previous && previous.agent !== options.agent && !options.force) {
    throw new InvalidArgumentError(
      "--out",
      `${out} holds a run of the ${previous.agent} agent; pass --force to start over there, or choose another --out`,
    );
  }
  const engines: BoxEngine[] = options.engines?.length
    ? await Promise.all(options.engines.map((url) => connectEngine(url, { tlsDir: options.engineTlsDir })))
    : [await Engine.connect()];
  // Images are found, built and pulled on a Docker engine: the first given, else this machine's
  // (a cluster gets them from there: pushed, or put on its nodes by its loader).
  const engine = engines.map(dockerEngine).find((e) => e !== undefined) ?? (await Engine.connect());
  if (
    options.agent === "aider" &&
    options.engines?.some((url) => !url.startsWith("unix://") && !isKubernetesTarget(url))
  ) {
    throw new InvalidArgumentError(
      "--engine",
      "the aider agent reaches its model through a socket on this machine, which boxes on a tcp:// engine cannot see; run the patch or command agent there, or give unix:// engines of this machine",
    );
  }
  const image = options.image ?? (await readySandboxImage(engine));
  if (engines[0] === engine) {
    await sandboxImagePresent(engine, image, options.pull, (line) =>
      process.stderr.write(terminalText(`${line}\n`)),
    );
  }
  const redact = secretRedactor(secretValues(loadProviderKeys({ envFile: options.envFile })));
  addLogRedactor(redact);

  let aider: MeteredAiderService | undefined;
  if (options.agent !== "patch") {
    const base = aiderServiceFromOptions({
      model: options.model,
      llm: options.llm,
      envFile: options.envFile,
      offlineScript: options.offlineScript,
      maxLlmRequests: options.maxLlmRequests,
      maxLlmCostUsd: options.maxLlmCostUsd,
      aiderOptions: options.aiderOptions,
    });
    aider = new MeteredAiderService(base.config);
  }
  let endpoint: TaskMcpEndpoint | undefined;
  let agent: EvalAgent;
  if (options.agent === "aider") agent = new AiderAgent(aider!);
  else if (options.agent === "patch") agent = new PatchAgent(options.patches);
  else {
    endpoint = await TaskMcpEndpoint.start({
      aider,
      stacks: new TaskStackStore({ dir: join(out, ".task-stacks") }),
    });
    agent = new CommandAgent(options.agentCommand!, endpoint);
  }

  const memoryMB = options.memoryMB ?? DEFAULT_LIMITS.memoryMB;
  const concurrency =
    options.concurrency ??
    (engines.length > 1 || engines[0] !== engine
      ? (await Promise.all(engines.map((e) => e.totalCapacity?.() ?? e.capacity())))
          .map((c) => defaultConcurrency(memoryMB, c.cpus, c.memoryMB))
          .reduce((a, b) => a + b, 0)
      : defaultConcurrency(memoryMB));
  const agentVersion =
    options.agentVersion ??
    (options.agent === "aider" && !options.image && !process.env.DRYDOCK_IMAGE
      ? sandboxAiderVersion()
      : undefined);
  const run: RunInfo = {
    schema_version: RESULT_SCHEMA_VERSION,
    run_id: options.runId ?? (!options.force ? previous?.run_id : undefined) ?? newRunId(),
    drydock_version: drydockVersion(),
    agent: options.agent,
    ...(agentVersion ? { agent_version: agentVersion } : {}),
    ...(agent.model ? { model: agent.model } : {}),
    ...(options.llm ? { llm: options.llm } : {}),
    ...(options.agentCommand ? { command: options.agentCommand } : {}),
    ...(options.patches
      ? {
          patches: {
            path: options.patches.path,
            kind: options.patches.kind,
            predictions: options.patches.count,
            key: options.patches.key,
          },
        }
      : {}),
    ...(options.shard ? { shard: { ...options.shard, task_set: taskSetKey(loaded.tasks) } } : {}),
    tasks_file: resolve(options.tasksPath),
    concurrency,
    attempts: options.attempts,
    default_timeout_s: options.timeoutS ?? DEFAULT_TIMEOUT_S,
    ...(options.agentTimeoutS ? { default_agent_timeout_s: options.agentTimeoutS } : {}),
    ...(options.testTimeoutS ? { default_test_timeout_s: options.testTimeoutS } : {}),
    graded_in: options.gradeInAgentBox ? "agent box" : "fresh box",
    integrity: options.integrity ?? "strict",
    ...(options.grading ? { grading: options.grading } : {}),
    image,
    started_at: new Date().toISOString(),
    tasks: tasks.map((t) => ({ id: t.id, source: t.source })),
    ...(options.instanceIds ? { instance_ids: options.instanceIds } : {}),
    ...(options.patches
      ? { submitted_ids: submittedIds(options.patches, tasks, problems, loaded.tasks, options.shard) }
      : {}),
    invalid_tasks: options.patches ? await withPredictions(problems, options.patches) : problems,
  };
  if (previous && !options.force) {
    // Finished attempts are kept on a resume: only under the settings they ran with. Changed
    // predictions are fine (each result keeps what it graded, and a changed one runs again).
    // A run from before graded_in was recorded graded in the agent's box; it is not held against it.
    // The patch agent's model is the predictions' model_name_or_path: another model's predictions
    // are another run, whose results must not be mixed with this one's.
    if (options.patches && previous.model !== run.model) {
      const name = (m: string | undefined) => (m === undefined ? "no model_name_or_path" : JSON.stringify(m));
      throw new InvalidArgumentError(
        "--out",
        `${out} holds a run of the predictions of ${name(previous.model)}, and ${options.patches.path} holds those of ${name(run.model)}; their results would be mixed. Choose another --out for ${name(run.model)}, or pass --force to start over there`,
      );
    }
    const differ = settingsDiffer(previous, run, ["patches", ...(previous.graded_in ? [] : ["graded_in"])]);
    if (previous.tasks_file !== run.tasks_file) {
      differ.unshift(`tasks file ${previous.tasks_file} vs ${run.tasks_file}`);
    }
    if (differ.length > 0) {
      throw new InvalidArgumentError(
        "--out",
        `${out} holds a run with other settings (${differ.join("; ")}, as there vs now); its finished attempts would be kept under these. Pass --force to start over there, or choose another --out`,
      );
    }
  }
  await writeRunInfo(out, run);
  let outcome: EvalRunOutcome;
  try {
    outcome = await runEval({
      engines,
      images: engine,
      tasks,
      agent,
      aider,
      out,
      concurrency,
      attempts: options.attempts,
      force: options.force,
      retryErrors: options.retryErrors,
      setupPerAttempt: options.setupPerAttempt,
      image,
      imageFor:
        options.environment === false
          ? undefined
          : taskImages(engine, image, options.caCert, options.allowBaseImages, options.pull),
      taskImage: taskImagePulls(engine, options.pull),
      memoryMB: options.memoryMB,
      cpus: options.cpus,
      defaultTimeoutS: run.default_timeout_s,
      defaultAgentTimeoutS: options.agentTimeoutS,
      defaultTestTimeoutS: options.testTimeoutS,
      gradeInAgentBox: options.gradeInAgentBox,
      integrity: options.integrity,
      grading: options.grading,
      gradeEmptyAnswers: options.gradeEmptyAnswers,
      runId: run.run_id,
      baseCountsDir: join(stateDir(), "cache", "eval-base-counts"),
      signal: options.signal,
      onProgress: options.onProgress,
      onNote: note,
    });
  } finally {
    await endpoint?.close();
  }
  run.finished_at = new Date().toISOString();
  if (outcome.cancelled > 0) run.interrupted = true;
  if (engines.length > 1 || engines[0] !== engine) run.engines = outcome.engines;
  const ours = new Set(run.tasks.map((t) => t.id));
  const finished = (await readAttempts(out)).filter((a) => ours.has(a.task_id) && a.attempt <= run.attempts);
  run.environment_images = environmentImagesOf(finished);
  await writeRunInfo(out, run);
  const results = await writeReports(out);
  const invalidTasks = new Set(problems.map((p) => `${p.source}:${p.line ?? ""}`)).size;
  return { results, outcome, invalidTasks, out };
}

/**
 * The instances the predictions answer, as SWE-bench's report counts them submitted: every
 * prediction for an instance of the task file (SWE-bench refuses any other), also with
 * `--instance-ids` (its --instance_ids runs fewer instances but counts every prediction); a
 * shard, a part of one run, counts those of its own part.
 */
function submittedIds(
  predictions: Predictions,
  tasks: EvalTask[],
  problems: TaskProblem[],
  all: EvalTask[],
  shard: Shard | undefined,
): string[] {
  const instances = new Set([
    ...(shard ? tasks : all).map((t) => t.id),
    ...problems.flatMap((p) => p.id ?? []),
  ]);
  return predictions.ids.filter((id) => instances.has(id)).sort();
}

/**
 * The problems of rows that could not run, each with whether the predictions answer it: SWE-bench's
 * report counts such an instance as submitted (an error, or an empty patch) or incomplete.
 */
async function withPredictions(problems: TaskProblem[], predictions: Predictions): Promise<TaskProblem[]> {
  return Promise.all(
    problems.map(async (p) => {
      const answer = p.id !== undefined ? await predictions.get(p.id) : undefined;
      if (!answer) return p;
      return { ...p, prediction: answer.patch.trim() === "" ? ("empty" as const) : ("given" as const) };
    }),
  );
}

/**
 * Each task's environment image: the repository's definition at the task's ref, none, or the
 * task's own. Tasks with the same definition and key files share one image (one build).
 */
function taskImages(
  engine: Engine,
  baseImage: string,
  caCert?: string,
  allowBaseImages?: string[],
  pull?: PullMode,
): AttemptEnv["imageFor"] {
  const environments = new EnvironmentImages(engine, { baseImage, caCert, allowBaseImages, pull });
  return async (repo, task, onLine) => {
    const choice = task.environment ?? "repo";
    if (choice === "none") return { image: baseImage };
    const override = typeof choice === "object" ? { text: stringify(choice), file: task.source } : undefined;
    const ref = task.environment_ref ?? task.ref;
    // The task file says which definition and commit it builds: the fix is there. A resumed run
    // runs a task again once the task changed; one whose definition is the working tree did not.
    const retry = override
      ? "run the same drydock eval again (the changed task runs again; the same --out keeps the rest)"
      : ref !== undefined
        ? "commit the fix, point the task's environment_ref (or ref) at that commit, and run the same drydock eval again (the changed task runs again)"
        : "run drydock eval again with another --out, or --force (this --out keeps the task's finished result)";
    const status = await environments.imageFor({ repo, ref, override, onLine, retry });
    return { image: status.image, built: status.built };
  };
}

/**
 * Each task's own `image`, pulled when the engine lacks it (or always, or never, as `--pull` and
 * the task's `pull` say); an image pulled in this run is checked once to serve as a box. Returns
 * the image's registry digest for the result.
 */
function taskImagePulls(engine: Engine, mode?: PullMode): AttemptEnv["taskImage"] {
  const pulls = new ImagePulls(engine, mode);
  const checks = new Map<string, Promise<void>>();
  return async (task, onLine) => {
    const present = await pulls.ensure(task.image, {
      namedBy: `${task.source}: image`,
      mode: task.pull,
      modeSource: task.pull ? `pull: never in ${task.source}` : undefined,
      onLine,
    });
    if (present.pulled && !checks.has(present.id)) {
      const check = checkServesAsBox(engine, task.image, `the image ${task.image}`, onLine);
      check.catch(() => undefined);
      checks.set(present.id, check);
    }
    await checks.get(present.id);
    const parsed = parseImageReference(task.image);
    const digest = parsed ? repoDigestOf(present.repoDigests, parsed.registry, parsed.path) : undefined;
    return digest ? { digest } : {};
  };
}
