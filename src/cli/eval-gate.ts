/**
 * `--fail-under RATE`: a CI gate on a run's resolved rate, for `eval` and `eval merge`. The run
 * and its reports are written whatever the rate; only the exit status says it was too low.
 */
import { FlagError } from "../util/errors.js";
import { printErr } from "./terminal-out.js";

/** `--fail-under`'s value: a resolved rate as a fraction (0.8) or a percentage (80%), from 0 to 1. */
export function parseRate(text: string): number {
  const trimmed = text.trim();
  const percent = /^(\d+(?:\.\d+)?)%$/.exec(trimmed);
  const value = percent ? Number(percent[1]) / 100 : /^\d+(?:\.\d+)?$/.test(trimmed) ? Number(trimmed) : NaN;
  if (!Number.isFinite(value) || value < 0 || value > 1) {
    throw new FlagError(
      "--fail-under",
      `${JSON.stringify(text)} is not a resolved rate; give a fraction from 0 to 1 (0.8) or a percentage (80%)`,
    );
  }
  return value;
}

const pct = (rate: number) => `${(rate * 100).toFixed(1).replace(/\.0$/, "")}%`;

/** Says how the resolved rate compares with the gate, and sets exit status 1 when it is under. */
export function applyFailUnder(rate: number, failUnder: number): void {
  if (rate < failUnder) {
    printErr(`[eval] resolved ${pct(rate)}, under --fail-under ${pct(failUnder)}: exit 1\n`);
    process.exitCode = 1;
  } else {
    printErr(`[eval] resolved ${pct(rate)}, at or above --fail-under ${pct(failUnder)}\n`);
  }
}
