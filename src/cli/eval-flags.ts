/**
 * `drydock eval`'s flags, checked before a task starts or a results directory is written: each
 * refusal names the flag and the fix, exit 2.
 */
import { stat } from "node:fs/promises";
import { resolve } from "node:path";
import { closeEngine, connectEngine, dockerEngine } from "../engine/connect-engine.js";
import { Engine } from "../engine/engine.js";
import { isKubernetesTarget, parseKubernetesTarget } from "../engine/kubernetes/kubernetes-target.js";
import { parseEngineAddress } from "../engine/engine-address.js";
import { AGENTS, type AgentName } from "../eval/eval-run.js";
import { parseAiderOptions, type AiderOptions } from "../tools/aider/aider-options.js";
import { parseRate } from "./eval-gate.js";
import { FlagError } from "../util/errors.js";
import { loadPredictions, type Predictions } from "../eval/predictions.js";
import type { CloneMap } from "../eval/swebench-rows.js";
import { parseShard, type Shard } from "../eval/shards.js";
import { asFlagError, imageFlag, llmFlag, offlineScriptFlag } from "./flag-checks.js";
import { cpus, decimal, memoryMB, seconds, wholeNumber } from "./flag-values.js";
import { keysFileFlag } from "./keys-file-flag.js";
import { runtimeFlag } from "./runtime-flag.js";
import type { BoxRuntime } from "../sandbox/box-runtime.js";
import { INTEGRITY_MODES, type IntegrityMode } from "../eval/test-integrity.js";
import { GRADING_MODES, type GradingMode } from "../eval/grade.js";
import { parseInstanceIds } from "../eval/instance-ids.js";

export interface EvalFlags {
  agent: string;
  agentCommand?: string;
  patches?: string;
  concurrency?: string;
  attempts: string;
  out: string;
  timeout: string;
  agentTimeout?: string;
  testTimeout?: string;
  gradeInAgentBox?: boolean;
  integrity?: string;
  grading?: string;
  instanceIds?: string[];
  task?: string[];
  runId?: string;
  agentVersion?: string;
  repos?: string[];
  repo?: string[];
  shard?: string;
  image?: string;
  memoryMb?: string;
  cpus?: string;
  runtime?: string;
  llm?: string;
  keysFile?: string;
  envFile?: string;
  offlineScript?: string;
  aiderOptions?: string;
  maxLlmRequests?: string;
  maxLlmCostUsd?: string;
  engine?: string[];
  engineTlsDir?: string;
  failUnder?: string;
}

export interface CheckedEvalFlags {
  agent: AgentName;
  /** `--fail-under`: the resolved rate (0 to 1) below which the run exits 1. */
  failUnder?: number;
  integrity: IntegrityMode;
  grading?: GradingMode;
  instanceIds?: string[];
  runtime: BoxRuntime;
  patches?: Predictions;
  concurrency?: number;
  attempts: number;
  timeoutS: number;
  agentTimeoutS?: number;
  testTimeoutS?: number;
  runId?: string;
  clones: CloneMap;
  shard?: Shard;
  memoryMB?: number;
  cpus?: number;
  keysFile?: string;
  offlineScript?: string;
  aiderOptions?: AiderOptions;
  maxLlmRequests?: number;
  maxLlmCostUsd?: number;
}

/** Repeatable flags: commander's collector. */
export function collect(value: string, previous: string[] = []): string[] {
  return [...previous, value];
}

/** `--instance-ids ID...` and its alias `--task ID` (repeatable), as one list; undefined when neither is given. */
export async function instanceIdsFlag(flags: {
  instanceIds?: string[];
  task?: string[];
}): Promise<string[] | undefined> {
  const given = [...(flags.instanceIds ?? []), ...(flags.task ?? [])];
  return given.length === 0 ? undefined : asFlagError(() => parseInstanceIds(given));
}

/** Help text of `--instance-ids` and `--task`, the same on every verb that takes them. */
export const INSTANCE_IDS_HELP =
  "only these tasks (SWE-bench rows' instance_id), space- or comma-separated; an id no task has is an error";
export const TASK_ID_HELP = "only this task (repeatable); the same as --instance-ids";

/** `--repos DIR` and `--repo owner/name=PATH`: where SWE-bench rows' repositories are cloned. */
async function cloneFlags(flags: EvalFlags): Promise<CloneMap> {
  const dirs: string[] = [];
  for (const dir of flags.repos ?? []) {
    const info = await stat(resolve(dir)).catch(() => undefined);
    if (!info?.isDirectory()) {
      throw new FlagError(
        "--repos",
        `${resolve(dir)} is not a directory; give the folder that holds the clones`,
      );
    }
    dirs.push(resolve(dir));
  }
  const explicit = new Map<string, string>();
  for (const pair of flags.repo ?? []) {
    const m = /^([^/=\s]+\/[^/=\s]+)=(.+)$/.exec(pair);
    if (!m) {
      throw new FlagError(
        "--repo",
        `${JSON.stringify(pair)} is not OWNER/NAME=PATH; write e.g. --repo astropy/astropy=../clones/astropy`,
      );
    }
    const path = resolve(m[2]!);
    if (!(await stat(path).catch(() => undefined))?.isDirectory()) {
      throw new FlagError("--repo", `${path} (for ${m[1]}) is not a directory; give a local clone`);
    }
    explicit.set(m[1]!, path);
  }
  return { dirs, explicit };
}

/** Run ids name report files (SWE-bench's `<model>.<run_id>.json`): safe file-name characters. */
function runIdFlag(value: string | undefined): string | undefined {
  if (value === undefined) return undefined;
  if (!/^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$/.test(value)) {
    throw new FlagError(
      "--run-id",
      `${JSON.stringify(value)} is not a run id; use 1-100 letters, digits, '.', '_' or '-', e.g. --run-id nightly-2026-11-23`,
    );
  }
  return value;
}

export async function checkEvalFlags(tasks: string, flags: EvalFlags): Promise<CheckedEvalFlags> {
  if (!(AGENTS as readonly string[]).includes(flags.agent)) {
    throw new FlagError(
      "--agent",
      `${JSON.stringify(flags.agent)} is not an agent; use one of ${AGENTS.join(", ")}`,
    );
  }
  const agent = flags.agent as AgentName;
  if (flags.agentCommand !== undefined && agent !== "command") {
    throw new FlagError(
      "--agent-command",
      "is the program of the command agent; add --agent command, or leave it out",
    );
  }
  if (flags.patches !== undefined && agent !== "patch") {
    throw new FlagError(
      "--patches",
      "gives the patch agent its answers (a folder of <task id>.diff files or a predictions file); add --agent patch, or leave it out",
    );
  }
  const failUnder = flags.failUnder === undefined ? undefined : parseRate(flags.failUnder);
  const integrity = flags.integrity ?? "strict";
  if (!(INTEGRITY_MODES as readonly string[]).includes(integrity)) {
    throw new FlagError(
      "--integrity",
      `${JSON.stringify(integrity)} is not a mode; use strict (a flagged attempt is never resolved) or lenient (for trusted agents: the tests decide)`,
    );
  }
  if (flags.grading !== undefined && !(GRADING_MODES as readonly string[]).includes(flags.grading)) {
    throw new FlagError(
      "--grading",
      `${JSON.stringify(flags.grading)} is not a mode; use swebench (as SWE-bench's harness grades and reports) or strict (a skipped test does not pass, empty answers are graded, every graded task gets report.json)`,
    );
  }
  const checked = {
    agent,
    ...(failUnder !== undefined ? { failUnder } : {}),
    integrity: integrity as IntegrityMode,
    grading: flags.grading as GradingMode | undefined,
    instanceIds: await instanceIdsFlag(flags),
    concurrency: wholeNumber(flags.concurrency, "--concurrency", { min: 1 }),
    attempts: wholeNumber(flags.attempts, "--attempts", { min: 1 })!,
    timeoutS: seconds(flags.timeout, "--timeout")!,
    agentTimeoutS: seconds(flags.agentTimeout, "--agent-timeout"),
    testTimeoutS: seconds(flags.testTimeout, "--test-timeout"),
    runId: runIdFlag(flags.runId),
    clones: await cloneFlags(flags),
    shard: flags.shard === undefined ? undefined : await asFlagError(() => parseShard(flags.shard!)),
    maxLlmRequests: wholeNumber(flags.maxLlmRequests, "--max-llm-requests", { min: 0 }),
    maxLlmCostUsd: decimal(flags.maxLlmCostUsd, "--max-llm-cost-usd", { min: 0 }),
    aiderOptions:
      flags.aiderOptions === undefined
        ? undefined
        : await asFlagError(() => parseAiderOptions(flags.aiderOptions, "--aider-options")),
  };
  const taskInfo = await stat(resolve(tasks)).catch(() => undefined);
  if (!taskInfo) {
    throw new FlagError(
      "TASKS",
      `${resolve(tasks)} does not exist; give a .jsonl or .yaml task file, or a directory of .yaml files`,
    );
  }
  const outInfo = await stat(resolve(flags.out)).catch(() => undefined);
  if (outInfo && !outInfo.isDirectory()) {
    throw new FlagError("--out", `${resolve(flags.out)} is a file; give a directory for the results`);
  }
  const patches =
    flags.patches === undefined ? undefined : await asFlagError(() => loadPredictions(flags.patches!));
  const keysFile = await keysFileFlag(flags.keysFile, flags.envFile);
  const offlineScript = await offlineScriptFlag(flags.offlineScript, "--offline-script");
  await llmFlag(flags.llm);
  if (flags.engineTlsDir !== undefined && !flags.engine?.some((url) => url.startsWith("tcp://"))) {
    throw new FlagError(
      "--engine-tls-dir",
      "holds the certificates of tcp:// engines; add --engine tcp://HOST:PORT",
    );
  }
  for (const url of flags.engine ?? []) {
    await asFlagError(() =>
      isKubernetesTarget(url) ? parseKubernetesTarget(url) : parseEngineAddress(url, flags.engineTlsDir),
    );
  }
  if (
    agent === "aider" &&
    flags.engine?.some((url) => !url.startsWith("unix://") && !isKubernetesTarget(url))
  ) {
    throw new FlagError(
      "--engine",
      "the aider agent reaches its model through a socket on this machine, which boxes on a tcp:// engine cannot see; run the patch or command agent there, or give unix:// engines of this machine",
    );
  }
  if (new Set(flags.engine ?? []).size !== (flags.engine ?? []).length) {
    throw new FlagError("--engine", "an engine is given twice; give each engine once");
  }
  // Limits and the runtime are checked on the first engine; images on the Docker engine they are
  // found on and sent (or loaded) to the others from: the first Docker engine given, else this machine's.
  const engine = await connectEngine(flags.engine?.[0], { tlsDir: flags.engineTlsDir });
  let capacity: { cpus: number; memoryMB: number };
  let runtime: BoxRuntime;
  try {
    capacity = await engine.capacity();
    runtime = await runtimeFlag(engine, flags.runtime);
  } finally {
    await closeEngine(engine);
  }
  const firstDocker = flags.engine?.find((url) => !isKubernetesTarget(url));
  await imageFlag(
    dockerEngine(engine) ?? (await Engine.connect({ url: firstDocker, tlsDir: flags.engineTlsDir })),
    flags.image,
  );
  return {
    ...checked,
    runtime,
    patches,
    keysFile,
    offlineScript,
    memoryMB: memoryMB(flags.memoryMb, "--memory-mb", capacity.memoryMB),
    cpus: cpus(flags.cpus, "--cpus", capacity.cpus),
  };
}
