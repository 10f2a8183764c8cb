/**
 * pytest's output: verbose lines (`tests/test_a.py::test_x PASSED [ 50%]`) and the short summary
 * of `-rA` (`FAILED tests/test_a.py::test_y - AssertionError`). Test ids are pytest's node ids.
 */
import { TestStatuses, type TestStatus } from "./test-status.js";

const STATUS: Record<string, TestStatus> = {
  PASSED: "passed",
  XFAIL: "passed",
  XPASS: "passed",
  FAILED: "failed",
  ERROR: "failed",
  SKIPPED: "skipped",
};
const WORDS = "PASSED|FAILED|ERROR|SKIPPED|XFAIL|XPASS";
// A skip's or xfail's reason may follow the word: `t.py::test_x SKIPPED (no db) [ 50%]`.
const VERBOSE = new RegExp(`^(\\S+?::\\S.*?) (${WORDS})(?: \\(.*\\))?(?:\\s+\\[\\s*\\d+%\\])?\\s*$`);
const SUMMARY = new RegExp(`^(${WORDS}) (\\S+?::.+?)(?: - .*)?\\s*$`);

export function parsePytestOutput(text: string): TestStatuses {
  const out = new TestStatuses();
  for (const line of text.split(/\r?\n/)) {
    const verbose = VERBOSE.exec(line);
    if (verbose) {
      out.set(verbose[1]!, STATUS[verbose[2]!]!);
      continue;
    }
    const summary = SUMMARY.exec(line);
    if (summary) out.set(summary[2]!, STATUS[summary[1]!]!);
  }
  return out;
}
