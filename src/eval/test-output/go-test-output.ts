/**
 * `go test -v` (`--- PASS: TestFoo (0.00s)`, subtests indented as `TestFoo/case`) and
 * `go test -json` (one event a line with Action and Test).
 */
import { TestStatuses, type TestStatus } from "./test-status.js";

const VERBOSE = /^\s*--- (PASS|FAIL|SKIP): (\S+) \(/;
const WORD: Record<string, TestStatus> = { PASS: "passed", FAIL: "failed", SKIP: "skipped" };
const ACTION: Record<string, TestStatus> = { pass: "passed", fail: "failed", skip: "skipped" };

export function parseGoTestOutput(text: string): TestStatuses {
  const out = new TestStatuses();
  for (const line of text.split(/\r?\n/)) {
    const verbose = VERBOSE.exec(line);
    if (verbose) {
      out.set(verbose[2]!, WORD[verbose[1]!]!);
      continue;
    }
    if (!line.startsWith("{") || !line.includes('"Action"')) continue;
    try {
      const event = JSON.parse(line) as { Action?: string; Test?: string };
      const status = event.Action ? ACTION[event.Action] : undefined;
      if (event.Test && status) out.set(event.Test, status);
    } catch {
      // Not an event line.
    }
  }
  return out;
}
