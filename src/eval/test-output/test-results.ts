/**
 * Test names and outcomes from a test command's output, whichever runner printed it: pytest,
 * unittest, vitest/jest or go test. Every parser runs; their formats do not overlap.
 */
import stripAnsi from "strip-ansi";
import { parseGoTestOutput } from "./go-test-output.js";
import { parseJestOutput } from "./jest-output.js";
import { parsePytestOutput } from "./pytest-output.js";
import { TestStatuses } from "./test-status.js";
import { parseUnittestOutput } from "./unittest-output.js";

export function parseTestOutput(output: string): TestStatuses {
  const text = stripAnsi(output);
  return new TestStatuses()
    .merge(parsePytestOutput(text))
    .merge(parseUnittestOutput(text))
    .merge(parseJestOutput(text))
    .merge(parseGoTestOutput(text));
}

export { TestStatuses, type TestStatus } from "./test-status.js";
