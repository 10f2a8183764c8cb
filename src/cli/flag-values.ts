/**
 * Numbers given on the command line, checked before anything starts: each refusal names the flag,
 * what was wrong and what to write instead.
 */
import { FlagError } from "../util/errors.js";

/** Node's timers hold at most 2^31 - 1 ms; a longer one would fire at once. */
export const MAX_SECONDS = Math.floor((2 ** 31 - 1) / 1000);

/** A box needs this much for its shell, git and python; the engine itself refuses under 6 MiB. */
export const MIN_MEMORY_MB = 128;

/** The engine refuses a CPU limit under 0.01. */
export const MIN_CPUS = 0.01;

export interface Range {
  min: number;
  max?: number;
  /** Why the maximum is what it is, for the message (e.g. "the engine's host has 2 CPUs"). */
  maxReason?: string;
  /** A good value to suggest (default: the minimum, or 1 when that is 0). */
  example?: number;
  /** What to do instead, when "write e.g. FLAG EXAMPLE" does not fit (a value from the environment). */
  hint?: string;
}

function outOfRange(value: string, flag: string, range: Range, kind: string): FlagError {
  const bounds = range.max === undefined ? `of ${range.min} or more` : `from ${range.min} to ${range.max}`;
  const why = range.maxReason ? ` (${range.maxReason})` : "";
  const hint = range.hint ?? `write e.g. ${flag} ${range.example ?? Math.max(range.min, 1)}`;
  return new FlagError(flag, `${JSON.stringify(value)} is not ${kind} ${bounds}${why}; ${hint}`);
}

/** A whole number in the range, or undefined when the flag was not given. */
export function wholeNumber(value: string | undefined, flag: string, range: Range): number | undefined {
  if (value === undefined) return undefined;
  const n = /^\s*\d+\s*$/.test(value) ? Number(value) : NaN;
  if (!Number.isSafeInteger(n) || n < range.min || (range.max !== undefined && n > range.max)) {
    throw outOfRange(value, flag, range, "a whole number");
  }
  return n;
}

/** A decimal number in the range, or undefined when the flag was not given. */
export function decimal(value: string | undefined, flag: string, range: Range): number | undefined {
  if (value === undefined) return undefined;
  const n = value.trim() === "" ? NaN : Number(value);
  if (!Number.isFinite(n) || n < range.min || (range.max !== undefined && n > range.max)) {
    throw outOfRange(value, flag, range, "a number");
  }
  return n;
}

/** A duration in seconds (above 0, at most what a timer can hold), or undefined. */
export function seconds(value: string | undefined, flag: string): number | undefined {
  if (value === undefined) return undefined;
  const n = value.trim() === "" ? NaN : Number(value);
  if (!Number.isFinite(n) || n <= 0 || n > MAX_SECONDS) {
    throw new FlagError(
      flag,
      `${JSON.stringify(value)} is not a number of seconds above 0 and at most ${MAX_SECONDS}; write e.g. ${flag} 600`,
    );
  }
  return n;
}

/** A TCP port, 0 (any free port) to 65535. */
export function port(value: string, flag: string): number {
  return wholeNumber(value, flag, {
    min: 0,
    max: 65_535,
    maxReason: "0 picks any free port",
    example: 8765,
  })!;
}

/** A memory limit per box, in MiB, that the engine's host can give. */
export function memoryMB(value: string | undefined, flag: string, hostMB: number): number | undefined {
  return wholeNumber(value, flag, {
    min: MIN_MEMORY_MB,
    max: hostMB,
    maxReason: `the engine's host has ${hostMB} MiB`,
    example: Math.min(2048, hostMB),
  });
}

/** A CPU limit per box that the engine's host can give. */
export function cpus(value: string | undefined, flag: string, hostCpus: number): number | undefined {
  return decimal(value, flag, {
    min: MIN_CPUS,
    max: hostCpus,
    maxReason: `the engine's host has ${hostCpus} CPU${hostCpus === 1 ? "" : "s"}`,
    example: 1,
  });
}
