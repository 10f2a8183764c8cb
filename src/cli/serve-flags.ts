/**
 * `drydock serve`'s flags, every one checked before anything starts (no prune, no pool, no
 * listening socket): a flag that cannot work stops the command with its name and the fix, exit 2.
 */
import type { BoxEngine } from "../engine/box-engine.js";
import { closeEngine, connectEngine, dockerEngine } from "../engine/connect-engine.js";
import { imageFlag, llmFlag, networkFlag, offlineScriptFlag, portFlag, repoFlag } from "./flag-checks.js";
import { cpus, memoryMB, port, seconds, wholeNumber, decimal } from "./flag-values.js";
import { FlagError } from "../util/errors.js";
import { keysFileFlag } from "./keys-file-flag.js";
import { runtimeFlag } from "./runtime-flag.js";
import { DEFAULT_LIMITS } from "../sandbox/box-profile.js";
import { HOST_SIDE_MIB, NEW_BOX_MIB } from "../server/admission-figure.js";
import { DEFAULT_POOL_MAX } from "../session/pool-growth.js";
import type { BoxRuntime } from "../sandbox/box-runtime.js";
import { DEFAULT_MAX_OUTPUT_BYTES } from "../session/session.js";

/** The highest --max-output-bytes: 256 MiB per stream. */
const MAX_OUTPUT_BYTES_LIMIT = 256 * 1024 * 1024;

/** The flags as commander hands them over (strings, as typed). */
export interface ServeFlags {
  engine?: string;
  repo: string;
  allowRepo: string[];
  image?: string;
  http?: boolean;
  host: string;
  port: string;
  network?: string;
  runtime?: string;
  memoryMb?: string;
  cpus?: string;
  timeout?: string;
  maxOutputBytes?: string;
  keysFile?: string;
  envFile?: string;
  offlineScript?: string;
  llm?: string;
  maxSessions?: string;
  maxCheckpoints?: string;
  checkpointMaxMb?: string;
  memoryReserveMb?: string;
  maxLlmRequests?: string;
  maxLlmCostUsd?: string;
  pool: string;
  poolMax?: string;
  poolTtl: string;
  keepSessions?: boolean;
  keepTtl?: string;
  disconnectGrace: string;
}

export interface CheckedServeFlags {
  /** The backend boxes run on, connected (the server keeps it; close it if the server does not start). */
  engine: BoxEngine;
  port: number;
  runtime: BoxRuntime;
  memoryMB?: number;
  cpus?: number;
  commandTimeoutMs?: number;
  maxOutputBytesLimit?: number;
  keysFile?: string;
  offlineScript?: string;
  maxSessions?: number;
  maxCheckpoints?: number;
  checkpointMaxBytes?: number;
  memoryReserveMB?: number;
  maxLlmRequests?: number;
  maxLlmCostUsd?: number;
  pool: number;
  /** The most idle boxes the pool grows to with demand (at least `pool`). */
  poolMax: number;
  poolTtlMs: number;
  keepTtlMs?: number;
  disconnectGraceMs: number;
}

export async function checkServeFlags(flags: ServeFlags): Promise<CheckedServeFlags> {
  // Numbers first: they need nothing but the text.
  const checked = {
    port: port(flags.port, "--port"),
    commandTimeoutMs: secondsToMs(seconds(flags.timeout, "--timeout")),
    maxOutputBytesLimit: wholeNumber(flags.maxOutputBytes, "--max-output-bytes", {
      min: DEFAULT_MAX_OUTPUT_BYTES,
      max: MAX_OUTPUT_BYTES_LIMIT,
      maxReason: "a reply holds each stream about four times, in the server's memory",
      example: 16 * 1024 * 1024,
    }),
    maxSessions: wholeNumber(flags.maxSessions, "--max-sessions", { min: 1 }),
    maxCheckpoints: wholeNumber(flags.maxCheckpoints, "--max-checkpoints", { min: 1 }),
    checkpointMaxBytes: mebibytes(wholeNumber(flags.checkpointMaxMb, "--checkpoint-max-mb", { min: 1 })),
    maxLlmRequests: wholeNumber(flags.maxLlmRequests, "--max-llm-requests", { min: 0 }),
    maxLlmCostUsd: decimal(flags.maxLlmCostUsd, "--max-llm-cost-usd", { min: 0 }),
    poolTtlMs: secondsToMs(seconds(flags.poolTtl, "--pool-ttl"))!,
    keepTtlMs: secondsToMs(seconds(flags.keepTtl, "--keep-ttl")),
    disconnectGraceMs: secondsToMs(seconds(flags.disconnectGrace, "--disconnect-grace"))!,
  };
  if (flags.keepTtl !== undefined && !flags.keepSessions) {
    throw new FlagError(
      "--keep-ttl",
      "applies to kept sessions only; add --keep-sessions, or drop --keep-ttl",
    );
  }
  // Then files and repositories on the host.
  await repoFlag(flags.repo, "--repo");
  for (const path of flags.allowRepo) await repoFlag(path, "--allow-repo");
  const keysFile = await keysFileFlag(flags.keysFile, flags.envFile);
  const offlineScript = await offlineScriptFlag(flags.offlineScript, "--offline-script");
  await llmFlag(flags.llm);
  if (flags.http) await portFlag(flags.host, checked.port);
  // Last what the engine must have.
  const engine = await connectEngine(flags.engine);
  try {
    return await engineFlags(engine, flags, { ...checked, keysFile, offlineScript });
  } catch (error) {
    await closeEngine(engine);
    throw error;
  }
}

async function engineFlags(
  engine: BoxEngine,
  flags: ServeFlags,
  checked: Omit<
    CheckedServeFlags,
    "engine" | "runtime" | "pool" | "poolMax" | "memoryMB" | "cpus" | "memoryReserveMB"
  >,
): Promise<CheckedServeFlags> {
  const docker = dockerEngine(engine);
  if (!docker && flags.keepSessions) {
    throw new FlagError(
      "--keep-sessions",
      `boxes on ${engine.name} are owned by this server's Lease and go with it; kept sessions need a Docker engine. Drop --keep-sessions`,
    );
  }
  const capacity = await engine.capacity();
  await imageFlag(engine, flags.image);
  if (docker) await networkFlag(docker, flags.network);
  else if (flags.network !== undefined && flags.network !== "none") {
    throw new FlagError(
      "--network",
      `a box on ${engine.name} has no network to join (a deny-all NetworkPolicy holds it); use --egress HOSTS for HTTPS to named hosts`,
    );
  }
  const runtime = await runtimeFlag(engine, flags.runtime, flags.network);
  const boxMB = memoryMB(flags.memoryMb, "--memory-mb", capacity.memoryMB);
  const fit = Math.floor(capacity.memoryMB / (boxMB ?? DEFAULT_LIMITS.memoryMB));
  const fromEnvironment = process.env.DRYDOCK_POOL !== undefined && process.env.DRYDOCK_POOL === flags.pool;
  return {
    ...checked,
    engine,
    runtime,
    memoryMB: boxMB,
    cpus: cpus(flags.cpus, "--cpus", capacity.cpus),
    // A reserve that leaves no room for one new session would refuse every session.
    memoryReserveMB: wholeNumber(flags.memoryReserveMb, "--memory-reserve-mb", {
      min: 0,
      max: Math.max(0, capacity.memoryMB - (NEW_BOX_MIB + HOST_SIDE_MIB)),
      maxReason: `the engine's host has ${capacity.memoryMB} MiB, and a new session counts ${NEW_BOX_MIB + HOST_SIDE_MIB}`,
      example: 4096,
    }),
    ...poolFlags(flags, fit, fromEnvironment),
  };
}

/** `--pool` and `--pool-max`: the base, and the ceiling the pool grows to (default DEFAULT_POOL_MAX). */
function poolFlags(
  flags: ServeFlags,
  fit: number,
  fromEnvironment: boolean,
): { pool: number; poolMax: number } {
  const pool = wholeNumber(flags.pool, fromEnvironment ? "DRYDOCK_POOL" : "--pool", {
    min: 0,
    max: fit,
    maxReason: `${fit} boxes at their memory limit fill the engine's host`,
    ...(fromEnvironment ? { hint: "set it to a number such as 1, or pass --pool N" } : {}),
  })!;
  const poolMax = wholeNumber(flags.poolMax, "--pool-max", {
    min: 0,
    max: fit,
    maxReason: `${fit} boxes at their memory limit fill the engine's host`,
  });
  if (poolMax === undefined) return { pool, poolMax: Math.max(pool, DEFAULT_POOL_MAX) };
  if (pool === 0 && poolMax > 0) {
    throw new FlagError(
      "--pool-max",
      "is the most a warm pool grows to, and --pool 0 keeps none; pass --pool N (1 or more), or drop --pool-max",
    );
  }
  if (poolMax < pool) {
    throw new FlagError(
      "--pool-max",
      `${poolMax} is below --pool ${pool}, the pool's base; pass --pool-max ${pool} or more (${pool}: the pool does not grow), or lower --pool`,
    );
  }
  return { pool, poolMax };
}

function secondsToMs(value: number | undefined): number | undefined {
  return value === undefined ? undefined : Math.round(value * 1000);
}

function mebibytes(mb: number | undefined): number | undefined {
  return mb === undefined ? undefined : mb * 1024 * 1024;
}
