/**
 * Test names and outcomes from a test command's output, whichever runner printed it: pytest,
 * unittest, vitest/jest or go test. Every parser runs; their formats do not overlap.
 *
 * `swebench`: pytest's output is read as SWE-bench 5.0.2's parse_log_pytest reads it (only lines
 * that start with a status word; pytest-output.ts), so a `-v` line counts for nothing, as there.
 */
import stripAnsi from "strip-ansi";
import { parseGoTestOutput } from "./go-test-output.js";
import { parseJestOutput } from "./jest-output.js";
import { parsePytestOutput, parsePytestOutputAsSwebench } from "./pytest-output.js";
import { TestStatuses } from "./test-status.js";
import { parseUnittestOutput } from "./unittest-output.js";

export function parseTestOutput(output: string, read: "drydock" | "swebench" = "drydock"): TestStatuses {
  const text = stripAnsi(output);
  return new TestStatuses()
    .merge(read === "swebench" ? parsePytestOutputAsSwebench(text) : parsePytestOutput(text))
    .merge(parseUnittestOutput(text))
    .merge(parseJestOutput(text))
    .merge(parseGoTestOutput(text));
}

export { TestStatuses, type TestStatus } from "./test-status.js";
