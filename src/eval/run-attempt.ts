/**
 * One attempt at one task: start a box with the repository, run setup, record the tree, let the
 * agent work, take its diff; then, in a fresh box of the task (setup again), apply that diff and
 * the test patch, run the tests, grade. Only what is in the diff reaches the tests, as in
 * SWE-bench's harness (`--grade-in-agent-box` grades in the agent's box instead). Whatever happens the box is removed. Every way it can end is a status; only
 * a stopped run (Ctrl-C) returns "cancelled", which is not recorded so a resume runs it again.
 */
import type { ImageEngine } from "../engine/box-engine.js";
import type { Session, SessionOptions } from "../session/session.js";
import type { SessionManager } from "../session/session-manager.js";
import { describeError } from "../util/errors.js";
import { logger } from "../util/log.js";
import {
  RESULT_SCHEMA_VERSION,
  diffStat,
  type AttemptResult,
  type AttemptStatus,
  type Phase,
} from "./attempt-result.js";
import { applyPatchInBox } from "./box-patch.js";
import { diffSince, recordTree, treeFiles } from "./box-tree.js";
import { baseCountLog, countBaseTests, type BaseTestCount } from "./base-test-count.js";
import { baseCountKey, type BaseCounts } from "./base-count-cache.js";
import { BesideAgent } from "./beside-agent.js";
import {
  integrityOf,
  restorePaths,
  touchedPaths,
  withTestCounts,
  type Integrity,
  type IntegrityMode,
} from "./test-integrity.js";
import { parseTestOutput } from "./test-output/test-results.js";
import { remainingMs, type AgentOutcome, type EvalAgent } from "./eval-agent.js";
import type { EvalTask } from "./eval-task.js";
import { gradeTests, type GradingMode } from "./grade.js";
import type { MeteredAiderService } from "./metered-aider-service.js";
import type { RepoSources } from "./repo-source.js";
import type { AttemptTexts } from "./results-dir.js";
import type { PreparedTasks } from "./prepared-task.js";

const log = logger("eval");

/** Test output kept per attempt (the shell keeps head and tail past it). */
const MAX_TEST_OUTPUT_BYTES = 4 * 1024 * 1024;
export const LABEL_EVAL_TASK = "drydock.eval.task";
/** On the box the tests run in: "grade". */
export const LABEL_EVAL_PHASE = "drydock.eval.phase";
/** On a box the tests run in that was started beside the agent (beside-agent.ts): "agent". */
export const LABEL_EVAL_BESIDE = "drydock.eval.beside";

export interface AttemptEnv {
  manager: SessionManager;
  repos: RepoSources;
  agent: EvalAgent;
  aider?: MeteredAiderService;
  image: string;
  /**
   * The image of a task's environment (built first when missing); without it every task without
   * an `image` gets `image`.
   */
  imageFor?: (
    repo: string,
    task: EvalTask,
    onLine: (line: string) => void,
  ) => Promise<{ image: string; built?: boolean }>;
  /**
   * Makes a task's own `image` present (pulled as `--pull` and the task's `pull` say, and checked
   * to serve as a box when pulled); returns its registry digest when it has one.
   */
  taskImage?: (
    task: EvalTask & { image: string },
    onLine: (line: string) => void,
  ) => Promise<{ digest?: string }>;
  memoryMB?: number;
  cpus?: number;
  defaultTimeoutS: number;
  /** The agent's and the tests' own limits for tasks that set none. */
  defaultAgentTimeoutS?: number;
  defaultTestTimeoutS?: number;
  /** Aborted when the run is stopped. */
  signal: AbortSignal;
  /** With several engines: makes an image present on the engine of `manager` (sent there once). */
  ensureImage?: (image: string) => Promise<void>;
  /** With several engines: the engine's name, recorded in the result. */
  engine?: string;
  /**
   * Grade in the agent's own box (`--grade-in-agent-box`): faster, but what the agent left outside
   * its diff (a file hidden from git, a module in its home) can sway the tests. By default the
   * tests run in a fresh box holding only the task's setup, the agent's diff and the test patch.
   */
  gradeInAgentBox?: boolean;
  /** How flagged attempts count (default "strict": never resolved); see IntegrityMode. */
  integrity?: IntegrityMode;
  /** `--grading`: every task graded this way; else see gradingOf. */
  grading?: GradingMode;
  /** With several attempts: each task's setup runs once, its boxes are forks (prepared-task.ts). */
  prepared?: PreparedTasks;
  /** drydock's counts of the tests without the agent's diff, taken once per task base (base-count-cache.ts). */
  baseCounts?: BaseCounts;
  /**
   * Room for a second box now, beside the attempt's own, on its engine: the box the tests run in,
   * started beside the agent with drydock's count (beside-agent.ts). Returns how to give the room
   * back, or undefined when there is none (the box then starts after the agent).
   */
  roomBeside?: () => (() => void) | undefined;
}

/** How a task is graded: `--grading` if given, else SWE-bench's way for its rows and strict for drydock tasks. */
export function gradingOf(task: EvalTask, forced?: GradingMode): GradingMode {
  return forced ?? (task.swebench_row ? "swebench" : "strict");
}

export type AttemptOutcome = { result: AttemptResult; texts: AttemptTexts } | "cancelled";

/** Why the box is gone, or undefined while it runs. */
async function boxTrouble(session: Session): Promise<string | undefined> {
  try {
    const state = await session.box.engine.boxState(session.box.id);
    if (!state) return "the box is gone";
    if (state.running) return undefined;
    const oom = state.oomKilled ? "; it ran out of memory (raise --memory-mb)" : "";
    return `the box stopped (exit code ${state.exitCode ?? "unknown"}${oom})`;
  } catch (error) {
    return `the box is gone: ${describeError(error)}`;
  }
}

export async function runAttempt(
  env: AttemptEnv,
  task: EvalTask,
  attempt: number,
  agentInput?: string,
): Promise<AttemptOutcome> {
  let startedAt = new Date();
  const timeoutS = task.timeout_s ?? env.defaultTimeoutS;
  const agentTimeoutS = task.agent_timeout_s ?? env.defaultAgentTimeoutS;
  const testTimeoutS = task.test_timeout_s ?? env.defaultTestTimeoutS;
  let deadline = startedAt.getTime() + timeoutS * 1000;
  const timings = { start: 0, setup: 0, agent: 0, tests: 0 };
  const texts: AttemptTexts = { diff: "", agentLog: "", testOutput: "" };
  let phase: Phase = "start";
  let phaseStarted = Date.now();
  const enter = (next: Phase) => {
    if (phase in timings) timings[phase as keyof typeof timings] = Date.now() - phaseStarted;
    phase = next;
    phaseStarted = Date.now();
  };
  /** The image the boxes run (the task's environment's, once known), and the time its build took. */
  let image: string | undefined;
  let environmentBuildMs = 0;
  let session: Session | undefined;
  let node: string | undefined;
  /** The fresh box the tests run in (none with gradeInAgentBox). */
  let grading: Session | undefined;
  /** The box the tests run in, started beside the agent when there is room. */
  let beside: BesideAgent | undefined;
  /** The agent's box being removed, when grading did not wait for it. */
  let agentBoxRemoval: Promise<unknown> | undefined;
  let outcome: AgentOutcome | undefined;
  let tests: AttemptResult["tests"];
  let integrity: Integrity | undefined;
  let status: AttemptStatus = "error";
  let error: string | undefined;
  let imageDigest: string | undefined;
  const timedOut = (what: string, limit = `the task's ${timeoutS} s (timeout_s)`) => {
    status = "timeout";
    error = `${what} did not finish within ${limit}`;
  };
  const agentLimit = agentTimeoutS ? `the agent's ${agentTimeoutS} s (agent_timeout_s)` : undefined;
  const testLimit = testTimeoutS ? `the tests' ${testTimeoutS} s (test_timeout_s)` : undefined;
  const gradingMode = gradingOf(task, env.grading);

  try {
    const repo = await env.repos.resolve(task.repo);
    image = task.image ?? env.image;
    if (task.image !== undefined && env.taskImage) {
      // Like an environment build, a pull is the run's cost, not the task's.
      const pulling = Date.now();
      try {
        imageDigest = (
          await env.taskImage(
            { ...task, image: task.image },
            (line) => void (texts.agentLog += `[image] ${line}\n`),
          )
        ).digest;
      } catch (e) {
        if (env.signal.aborted) return "cancelled";
        // No box ran it: the result names no image.
        image = undefined;
        status = "setup_error";
        error = `the task's image is not available: ${describeError(e)}`;
        return finish();
      }
      deadline += Date.now() - pulling;
    }
    if (task.image === undefined && env.imageFor) {
      // An environment build is the run's cost, not the task's: it does not count against
      // timeout_s, nor in the attempt's start and duration (it is environment_build_ms).
      const building = Date.now();
      try {
        const environment = await env.imageFor(
          repo,
          task,
          (line) => void (texts.agentLog += `[environment] ${line}\n`),
        );
        image = environment.image;
        const spent = Date.now() - building;
        deadline += spent;
        if (environment.built) {
          environmentBuildMs = spent;
          startedAt = new Date(startedAt.getTime() + spent);
          phaseStarted += spent;
        }
      } catch (e) {
        if (env.signal.aborted) return "cancelled";
        image = undefined;
        status = "setup_error";
        error = `the task's environment did not build: ${describeError(e)}`;
        return finish();
      }
    }
    if (env.ensureImage) {
      // Like an environment build, sending the image is the run's cost, not the task's.
      const sending = Date.now();
      try {
        await env.ensureImage(image);
        deadline += Date.now() - sending;
      } catch (e) {
        if (env.signal.aborted) return "cancelled";
        status = "box_error";
        error = `could not send the image ${image} to ${env.engine ?? "the engine"}: ${describeError(e)}`;
        return finish();
      }
    }
    const boxOptions = {
      repo,
      ref: task.ref,
      image,
      memoryMB: env.memoryMB,
      cpus: env.cpus,
      commandTimeoutMs: Math.max(timeoutS, agentTimeoutS ?? 0, testTimeoutS ?? 0) * 1000,
      maxOutputBytes: MAX_TEST_OUTPUT_BYTES,
      labels: { [LABEL_EVAL_TASK]: task.id },
    };
    const gradeLabels = { [LABEL_EVAL_PHASE]: "grade" };
    const forked = await forkPrepared(boxOptions);
    if (forked) {
      session = forked.session;
      texts.agentLog += forked.log;
      enter("setup");
    } else {
      try {
        session = await env.manager.create(boxOptions);
      } catch (e) {
        if (env.signal.aborted) return "cancelled";
        // No box ran it: the result names no image (the error says which one failed).
        image = undefined;
        const message = describeError(e);
        // A repository or ref that cannot be read is the task's fault; anything else is the box's.
        status = /^(repo|ref): /.test(message) ? "error" : "box_error";
        error = `could not start the box: ${message}`;
        throw e;
      }
      enter("setup");
      if (await runSetup(session, "setup", (text) => (texts.agentLog += text))) return "cancelled";
      if (error) return finish();
    }
    node = await session.box.engine.boxNode?.(session.box.id).catch(() => undefined);
    const tree = await recordTree(session.box, env.signal);
    // Once the agent's box is up (not with it: two boxes starting at once slow the agent's start,
    // which is on the task's clock), the box the tests run in starts beside it, if there is room.
    const room = env.gradeInAgentBox ? undefined : env.roomBeside?.();
    if (room) beside = startBeside(boxOptions, { ...gradeLabels, [LABEL_EVAL_BESIDE]: "agent" }, room);

    enter("agent");
    const activeSession = session;
    const agentDeadline = agentTimeoutS ? Date.now() + agentTimeoutS * 1000 : deadline;
    outcome = await env.agent.run({
      task,
      session: activeSession,
      attempt,
      deadline: agentDeadline,
      signal: env.signal,
      log: (text) => void (texts.agentLog += text),
    });
    if (env.signal.aborted) return "cancelled";
    texts.diff = await diffSince(session.box, tree, env.signal);
    if (outcome.timedOut) {
      timedOut("the agent", agentLimit);
      return finish();
    }
    if (outcome.error) {
      status = "agent_error";
      error = (await boxTrouble(session)) ?? outcome.error;
      if (error !== outcome.error) status = "box_error";
      return finish();
    }

    enter("tests");
    const integrityContext = { testCmd: task.test_cmd, flagOutsideEditable: gradingMode === "strict" };
    integrity = integrityOf(texts.diff, task.test_patch, task.editable_files, integrityContext);
    let testBox = session;
    let testTree = tree;
    /** The count taken (or waited for) in the box started beside the agent. */
    let besideCount: (BaseTestCount & { log: string }) | undefined;
    /** The files of the tree the tests start from, when listed beside the agent. */
    let baseFiles: Set<string> | undefined;
    if (!env.gradeInAgentBox && beside) {
      // The agent's box goes while grading starts; the finally waits for it.
      agentBoxRemoval = env.manager.destroy(session.id).catch(() => undefined);
      const waiting = Date.now();
      const early = await beside.result;
      if ("session" in early) {
        // Removed by beside.end().
        grading = early.session;
        texts.testOutput +=
          `$ (grading in a fresh box started beside the agent: the task's setup and drydock's count ran ` +
          `while the agent worked; grading waited ${((Date.now() - waiting) / 1000).toFixed(1)} s for them; then the agent's diff)\n` +
          early.log;
        // The count's time is drydock's, not the task's: what grading waited for it is given back.
        deadline += Date.now() - Math.max(waiting, early.readyAt);
        besideCount = early.count;
        testTree = early.tree;
        baseFiles = early.files;
      } else {
        texts.testOutput += `$ (the box started beside the agent cannot be graded in: ${early.error}; starting another)\n`;
      }
    }
    if (!env.gradeInAgentBox && !grading) {
      // As SWE-bench grades: a fresh box with the task's setup and the agent's diff, nothing else.
      texts.testOutput += "$ (grading in a fresh box: the task's setup, then the agent's diff)\n";
      await (agentBoxRemoval ?? env.manager.destroy(session.id).catch(() => undefined));
      const forkedGrading = await forkPrepared(boxOptions, gradeLabels);
      if (forkedGrading) {
        grading = forkedGrading.session;
        texts.testOutput += forkedGrading.log;
      } else {
        try {
          grading = await env.manager.create({
            ...boxOptions,
            labels: { ...boxOptions.labels, ...gradeLabels },
          });
        } catch (e) {
          if (env.signal.aborted) return "cancelled";
          status = "box_error";
          error = `could not start the box the tests run in: ${describeError(e)}`;
          return finish();
        }
        const inGrading = "setup in the box the tests run in";
        if (await runSetup(grading, inGrading, (text) => (texts.testOutput += text))) return "cancelled";
        if (error) return finish();
      }
      testTree = await recordTree(grading.box, env.signal);
    }
    if (grading) testBox = grading;
    // Which modules are the project's own, where pytest puts the test directories on sys.path:
    // read from the tree the tests start from.
    integrity = integrityOf(texts.diff, task.test_patch, task.editable_files, {
      ...integrityContext,
      baseFiles: baseFiles ?? (await treeFiles(testBox.box, testTree, env.signal)),
    });
    const strict = (env.integrity ?? "strict") === "strict";
    let baseTests: number | undefined;
    if (!env.gradeInAgentBox && texts.diff.trim() !== "") {
      // Counted in the fresh box before the agent's diff; the agent's own box could sway it.
      // An empty diff leaves the tree as it was: the count would be the graded run's own.
      // The count is drydock's check, not the task's work: it has a budget of its own (the
      // tests' limit, or the task's), the time it takes is given back to the task's clock, and it
      // is taken once per task base (an attempt that finds it kept skips it).
      // Started beside the agent, it was waited for above.
      // One that ran out of its time there is taken again now: the agent, gone, cannot slow it down.
      const counting = Date.now();
      if (besideCount?.timedOut) {
        texts.testOutput += `${besideCount.log}$ (drydock's count ran out of its time beside the agent; taken again now that the agent is done)\n`;
      }
      const base =
        besideCount && !besideCount.timedOut
          ? besideCount
          : await baseCount(testBox, testTree, env.signal, besideCount?.timedOut);
      deadline += Date.now() - counting;
      if (env.signal.aborted) return "cancelled";
      texts.testOutput += base.log;
      baseTests = base.count;
    }
    if (!env.gradeInAgentBox) {
      const applied = await applyPatchInBox(testBox.box, texts.diff, "agent", env.signal);
      texts.testOutput += `$ (applying the agent's diff)\n${applied.log}\n`;
      if (!applied.applied) {
        status = "error";
        error =
          "the agent's diff does not apply in a fresh box of the task (a setup that differs from run to run?)";
        return finish();
      }
    }
    // The test runner starts as the task's tree says, whatever the agent did to its files.
    await restorePaths(testBox.box, testTree, integrity.runner_files_restored, env.signal);
    if (integrity.runner_files_restored.length > 0) {
      const shadows = new Map((integrity.shadowing_modules ?? []).map((m) => [m.path, m.module]));
      const named = integrity.runner_files_restored.map((p) =>
        shadows.has(p) ? `${p} (shadows the module ${shadows.get(p)}; removed)` : p,
      );
      texts.testOutput += `$ (the agent changed the test runner's files; restored: ${named.join(", ")})\n`;
    }
    if (integrity.tampering) {
      texts.testOutput += `$ (drydock's static look at the diff: it may change the test framework in-process: ${integrity.tampering
        .map((f) => `${f.path}:${f.line} ${f.what}`)
        .join("; ")})\n`;
    }
    // The tests' own limit counts from here: the fresh box's start and setup count against timeout_s.
    const testDeadline = testTimeoutS ? Date.now() + testTimeoutS * 1000 : deadline;
    if (task.test_patch !== undefined) {
      // The tests graded are the task's, whatever the agent did to them.
      await restorePaths(testBox.box, testTree, touchedPaths(task.test_patch), env.signal);
      if (integrity.test_files_restored.length > 0) {
        texts.testOutput += `$ (the agent changed test files; restored before test_patch: ${integrity.test_files_restored.join(", ")})\n`;
      }
      const applied = await applyPatchInBox(testBox.box, task.test_patch, "test", env.signal);
      texts.testOutput += `$ (applying test_patch)\n${applied.log}\n`;
      if (!applied.applied) {
        status = "setup_error";
        error = "test_patch does not apply on top of the agent's changes";
        return finish();
      }
    }
    texts.testOutput += `$ ${task.test_cmd}\n`;
    const suiteStarted = Date.now();
    const r = await testBox.bash(task.test_cmd, { timeoutMs: remainingMs(testDeadline), signal: env.signal });
    const suiteMs = Date.now() - suiteStarted;
    texts.testOutput += r.output;
    if (env.signal.aborted) return "cancelled";
    tests = { exit_code: r.exitCode ?? undefined, timed_out: r.timedOut, duration_ms: suiteMs };
    if (r.timedOut) {
      // SWE-bench's harness ends a timed-out test log with this line; its report reads it.
      texts.testOutput += `\n\nTimeout error: ${testTimeoutS ?? timeoutS} seconds exceeded.\n`;
      timedOut("the tests", testLimit);
      return finish();
    }
    const trouble = r.exitCode === null ? await boxTrouble(testBox) : undefined;
    if (trouble) {
      status = "box_error";
      error = trouble;
      return finish();
    }
    enter("grade");
    const grade = gradeTests(task, { exitCode: r.exitCode ?? undefined, output: r.output }, gradingMode);
    tests.grade = grade;
    integrity = withTestCounts(integrity, parseTestOutput(r.output).size, baseTests);
    // Strict: tests that pass after the agent touched how they run, or that report far fewer
    // results than the suite has, prove nothing; the flags say why it is not resolved.
    status = grade.resolved && !(strict && integrity.flags.length > 0) ? "resolved" : "unresolved";
    return finish();
  } catch (e) {
    if (env.signal.aborted) return "cancelled";
    if (!error) {
      const box = grading ?? session;
      const trouble = box ? await boxTrouble(box) : undefined;
      status = trouble ? "box_error" : "error";
      error = trouble ?? describeError(e);
    }
    log.debug(`${task.id}#${attempt}: ${error}`);
    return finish();
  } finally {
    await beside?.end();
    await agentBoxRemoval;
    if (session && !agentBoxRemoval) await env.manager.destroy(session.id).catch(() => undefined);
    if (grading) await env.manager.destroy(grading.id).catch(() => undefined);
  }

  /**
   * drydock's count of the task's tests without the agent's diff, in `box` (the fresh box, before
   * the diff): kept once per task base by env.baseCounts, else taken here.
   */
  async function baseCount(
    box: Session,
    tree: string,
    signal: AbortSignal = env.signal,
    again = false,
  ): Promise<BaseTestCount & { log: string }> {
    const take = async () => {
      const counted = await countBaseTests(box, task, tree, {
        timeoutMs: (testTimeoutS ?? timeoutS) * 1000,
        signal,
      });
      // A count cut short by a stop is no count: not kept.
      if (signal.aborted) throw new Error("the run was stopped");
      return counted;
    };
    if (!env.baseCounts) {
      const counted = await take();
      return { ...counted, log: baseCountLog(counted, "counted by this attempt") };
    }
    // The image's id where the engine has one (a tag rebuilt since is another base), else its name.
    const engine = box.box.engine as Partial<ImageEngine>;
    const imageId =
      image && typeof engine.imageId === "function"
        ? await engine.imageId(image).catch(() => undefined)
        : undefined;
    const key = baseCountKey({
      repo: task.repo,
      ref: task.ref,
      tree,
      testPatch: task.test_patch,
      testCmd: task.test_cmd,
      setup: task.setup,
      image: imageId ?? image ?? "",
    });
    if (again) await env.baseCounts.forgetTimedOut(key);
    const got = await env.baseCounts.get(key, `${task.id}#${attempt}`, take);
    return { ...got.count, log: baseCountLog(got.count, got.origin) };
  }

  /**
   * The box the tests run in, started now beside the agent's (beside-agent.ts): a fork of the
   * task's prepared box, or a new box with the task's setup; then drydock's count there.
   */
  function startBeside(options: SessionOptions, labels: Record<string, string>, release: () => void) {
    return new BesideAgent(
      {
        start: async (signal) => {
          const forkedBox = await forkPrepared(options, labels);
          if (forkedBox) return { session: forkedBox.session, log: forkedBox.log };
          const box = await env.manager.create({ ...options, labels: { ...options.labels, ...labels } });
          if (!task.setup) return { session: box, log: "" };
          try {
            const r = await box.bash(task.setup, { timeoutMs: remainingMs(deadline), signal });
            if (r.timedOut || r.exitCode !== 0) {
              throw new Error(
                `its setup ${r.timedOut ? "did not finish" : `exited ${r.exitCode ?? "without a code"}`}`,
              );
            }
            return { session: box, log: `$ ${task.setup}  (setup)\n${r.output}\n` };
          } catch (e) {
            await env.manager.destroy(box.id).catch(() => undefined);
            throw e;
          }
        },
        tree: async (box, signal) => {
          const recorded = await recordTree(box.box, signal);
          return { tree: recorded, files: await treeFiles(box.box, recorded, signal) };
        },
        count: (box, tree, signal) => baseCount(box, tree, signal),
        destroy: (box) => env.manager.destroy(box.id),
      },
      env.signal,
      release,
    );
  }

  /** A box forked from the task's prepared box, or undefined: the caller starts one of its own. */
  function forkPrepared(options: SessionOptions, labels?: Record<string, string>) {
    return env.prepared?.forAttempt(task, attempt, options, env.manager, deadline, env.signal, labels);
  }

  /**
   * Runs the task's setup in a box, logging it with `log`; a failure sets status and error.
   * True when the run was stopped meanwhile.
   */
  async function runSetup(box: Session, what: string, log: (text: string) => void): Promise<boolean> {
    if (!task.setup) return false;
    const r = await box.bash(task.setup, { timeoutMs: remainingMs(deadline), signal: env.signal });
    log(`$ ${task.setup}  (setup)\n${r.output}\n`);
    if (env.signal.aborted) return true;
    if (r.timedOut) timedOut(what);
    else if (r.exitCode !== 0) {
      status = "setup_error";
      error =
        (await boxTrouble(box)) ??
        `${what} exited ${r.exitCode ?? "without a code"}: ${r.output.trim().slice(-500)}`;
    }
    return false;
  }

  function finish(): AttemptOutcome {
    enter(phase);
    const usage = session && env.aider ? env.aider.takeUsage(session.id) : undefined;
    const finishedAt = new Date();
    const result: AttemptResult = {
      schema_version: RESULT_SCHEMA_VERSION,
      task_id: task.id,
      attempt,
      status,
      resolved: status === "resolved",
      ...(error ? { error, phase } : {}),
      agent: env.agent.name,
      ...((outcome?.model ?? usage?.model) ? { model: outcome?.model ?? usage?.model } : {}),
      task_hash: task.hash,
      grading: gradingMode,
      ...(agentInput !== undefined ? { agent_input: agentInput } : {}),
      ...(env.agent.gradesAnswers
        ? { prediction: outcome?.empty ? ("empty" as const) : ("given" as const) }
        : {}),
      ...(session ? { session_id: session.id } : {}),
      ...(tests ? { graded_in: env.gradeInAgentBox ? ("agent box" as const) : ("fresh box" as const) } : {}),
      ...(imageDigest ? { image_digest: imageDigest } : {}),
      ...(env.engine ? { engine: env.engine } : {}),
      ...(node ? { node } : {}),
      ...(image !== undefined ? { environment_image: image, environment_build_ms: environmentBuildMs } : {}),
      started_at: startedAt.toISOString(),
      finished_at: finishedAt.toISOString(),
      duration_ms: finishedAt.getTime() - startedAt.getTime(),
      timings_ms: timings,
      tokens: usage?.tokens ?? { input: 0, output: 0 },
      cost_usd: usage?.costUsd ?? 0,
      llm_requests: usage?.llmRequests ?? 0,
      diff_stat: diffStat(texts.diff),
      ...(outcome
        ? {
            agent_result: {
              ...(outcome.exitCode !== undefined ? { exit_code: outcome.exitCode } : {}),
              ...(outcome.message ? { message: outcome.message } : {}),
            },
          }
        : {}),
      ...(tests ? { tests } : {}),
      ...(integrity ? { integrity } : {}),
    };
    return { result, texts };
  }
}
