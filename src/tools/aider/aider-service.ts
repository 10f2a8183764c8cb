/**
 * aider in a session's box: choose the model, start the session's gateway and relay, record the
 * workspace, run aider with the relay's addresses and a dummy key, undo edits to files that were
 * not editable, and shape the result. Calls on one session run one at a time.
 */
import { randomBytes } from "node:crypto";
import {
  aiderEnv,
  chooseAiderModel,
  type AiderModelChoice,
  type LlmMode,
  type ProviderKeys,
} from "../../gateway/index.js";
import type { Session } from "../../session/session.js";
import { SerialQueue } from "../../tasks/serial-queue.js";
import { InvalidArgumentError } from "../../util/errors.js";
import { logger } from "../../util/log.js";
import { buildAiderArgv } from "./aider-argv.js";
import { aiderFiles, type AiderFiles } from "./aider-files.js";
import { OFFLINE_METADATA_FILE, prepareAiderHome } from "./aider-home.js";
import { AiderJobs } from "./aider-jobs.js";
import { DEFAULT_AIDER_TIMEOUT_S, mergeAiderOptions, type AiderOptions } from "./aider-options.js";
import { aiderOutcome } from "./aider-outcome.js";
import { runAiderProcess } from "./aider-process.js";
import { RELAY_PORT } from "./box-relay.js";
import { ModelCatalog } from "./model-catalog.js";
import type { SessionGateways } from "./session-gateways.js";
import { UsageTally } from "./usage-tally.js";
import { AIDER_RUN_DIR, finishWorkspace, snapshotWorkspace } from "./workspace-snapshot.js";

const log = logger("aider");

export interface AiderServiceConfig {
  gateways: SessionGateways;
  mode: LlmMode;
  keys: ProviderKeys;
  /** The model when a call names none (--model, DRYDOCK_MODEL); else the default for the host's key, else offline. */
  defaultModel?: string;
  /** Server-wide aider options; a call's `aider_options` override them field by field. */
  options?: AiderOptions;
}

export interface AiderCodeRequest {
  prompt: string;
  editable: readonly string[];
  readonly?: readonly string[];
  model?: string;
  options?: AiderOptions;
}

/** A request checked and resolved before any work starts, so bad input fails at once. */
export interface PreparedAiderCall {
  prompt: string;
  files: AiderFiles;
  choice: AiderModelChoice;
  options: AiderOptions;
}

export interface AiderCodeResult {
  success: boolean;
  diff: string;
  message: string;
  model: string;
  session_id: string;
  duration_ms: number;
  tokens: { input: number; output: number };
  cost_usd: number;
  llm_requests: number;
  /** Files aider changed though they were not editable; those changes were undone. */
  reverted_files: string[];
  timings_ms: { setup: number; aider: number; diff: number };
}

export interface AiderRunHooks {
  signal?: AbortSignal;
  onLine?: (line: string) => void;
}

export class AiderService {
  readonly catalog = new ModelCatalog();
  /** Calls started with `background: true`. */
  readonly jobs = new AiderJobs<AiderCodeResult>();
  private readonly queues = new WeakMap<Session, SerialQueue>();

  constructor(readonly config: AiderServiceConfig) {}

  /** The model a call would use; throws InvalidArgumentError naming the fix when it cannot be served. */
  chooseModel(requested?: string): AiderModelChoice {
    try {
      return chooseAiderModel({
        requested: requested ?? this.config.defaultModel,
        keys: this.config.keys,
        mode: this.config.mode,
      });
    } catch (error) {
      if (!(error instanceof InvalidArgumentError)) throw error;
      const problem = error.message.replace(/^model: /, "");
      throw new InvalidArgumentError("model", `${problem}. list_models shows the model names aider knows`);
    }
  }

  /** Checks paths, model and options; throws before anything runs. */
  prepare(request: AiderCodeRequest): PreparedAiderCall {
    if (request.prompt.trim() === "") {
      throw new InvalidArgumentError("ai_coding_prompt", "is empty; say what aider should change");
    }
    return {
      prompt: request.prompt,
      files: aiderFiles(request.editable, request.readonly ?? []),
      choice: this.chooseModel(request.model),
      options: mergeAiderOptions(this.config.options ?? {}, request.options),
    };
  }

  /** Runs a prepared call in the session's box, after any call already running there. */
  run(session: Session, call: PreparedAiderCall, hooks: AiderRunHooks = {}): Promise<AiderCodeResult> {
    let queue = this.queues.get(session);
    if (!queue) {
      queue = new SerialQueue();
      this.queues.set(session, queue);
    }
    return queue.run(() => this.runNow(session, call, hooks));
  }

  private async runNow(
    session: Session,
    call: PreparedAiderCall,
    hooks: AiderRunHooks,
  ): Promise<AiderCodeResult> {
    const started = performance.now();
    const { files, choice, options } = call;
    const runId = `${Date.now()}-${randomBytes(4).toString("hex")}`;
    const [gateway, snapshot] = await Promise.all([
      this.config.gateways.forSession(session, hooks.signal),
      snapshotWorkspace(session.box, [...files.editable, ...files.readonly], hooks.signal),
      prepareAiderHome(session.box, hooks.signal),
    ]);
    const setupMs = performance.now() - started;
    const allowed = [...new Set([...files.editable, ...snapshot.resolved.slice(0, files.editable.length)])];

    const tally = new UsageTally();
    const unsubscribe = gateway.onExchange((event) => tally.add(event));
    const timeoutS = options.timeout_s ?? DEFAULT_AIDER_TIMEOUT_S;
    log.info(
      `session ${session.id}: aider with ${choice.model} on ${files.editable.join(", ")} (${choice.reason})`,
    );
    let run;
    try {
      run = await runAiderProcess(session.box, {
        argv: buildAiderArgv({
          model: choice.model,
          prompt: call.prompt,
          editable: files.editable,
          readonly: files.readonly,
          options,
          runDir: AIDER_RUN_DIR,
          runId,
        }),
        env: {
          ...aiderEnv({ port: RELAY_PORT, choice, modelMetadataFile: OFFLINE_METADATA_FILE }),
          HOME: "/home/agent",
          PYTHONUNBUFFERED: "1",
          NO_COLOR: "1",
          COLUMNS: "400",
        },
        runId,
        timeoutMs: timeoutS * 1000,
        signal: hooks.signal,
        onLine: hooks.onLine,
      });
    } finally {
      unsubscribe();
    }
    const diffStarted = performance.now();
    const changes = await finishWorkspace(session.box, snapshot.tree, allowed);
    const usage = tally.totals();
    const outcome = aiderOutcome({
      exitCode: run.exitCode,
      output: run.output,
      diff: changes.diff,
      reverted: changes.reverted,
      refusals: usage.refusals,
      ...(run.stopped === "cancelled" ? { stopped: { reason: "cancelled" as const } } : {}),
      ...(run.stopped === "timeout" ? { stopped: { reason: "timeout" as const, timeoutS } } : {}),
    });
    const durationMs = Math.round(performance.now() - started);
    log.info(
      `session ${session.id}: aider ${outcome.success ? "succeeded" : "failed"} in ${durationMs} ms (${usage.requests} model calls, ${usage.inputTokens}+${usage.outputTokens} tokens)`,
    );
    return {
      success: outcome.success,
      diff: outcome.diff,
      message: outcome.message,
      model: choice.model,
      session_id: session.id,
      duration_ms: durationMs,
      tokens: { input: usage.inputTokens, output: usage.outputTokens },
      cost_usd: usage.costUsd,
      llm_requests: usage.requests,
      reverted_files: changes.reverted,
      timings_ms: {
        setup: Math.round(setupMs),
        aider: run.durationMs,
        diff: Math.round(performance.now() - diffStarted),
      },
    };
  }
}
