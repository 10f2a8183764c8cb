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

/** SWE-bench's TestStatus values, in the order its parsers test them. */
const SWEBENCH_WORDS = ["FAILED", "PASSED", "SKIPPED", "ERROR", "XFAIL"] as const;
const SWEBENCH_STATUS: Record<(typeof SWEBENCH_WORDS)[number], TestStatus> = {
  FAILED: "failed",
  PASSED: "passed",
  SKIPPED: "skipped",
  ERROR: "failed",
  XFAIL: "passed",
};

/**
 * pytest's output read exactly as SWE-bench 5.0.2's parse_log_pytest reads it: only lines that
 * start with a status word (`PASSED tests/t.py::test_x`, the `-rA` summary), the name being the
 * line's second word (` - ` taken out of a FAILED line first), pytest's `SKIPPED [2] t.py:3: why`
 * summaries left out, a later line for a name winning over an earlier one. A verbose line
 * (`tests/t.py::test_x PASSED [ 50%]`, from `-v`) is not read, nor an XPASS.
 */
export function parsePytestOutputAsSwebench(text: string): TestStatuses {
  const map = new Map<string, TestStatus>();
  for (let line of text.split("\n")) {
    const word = SWEBENCH_WORDS.find((w) => line.startsWith(w));
    if (!word) continue;
    if (line.startsWith("FAILED")) line = line.replaceAll(" - ", " ");
    // Python's str.split(): runs of whitespace, none at the ends.
    const parts = line.trim().split(/\s+/);
    if (parts.length <= 1) continue;
    const status = parts[0]!;
    const name = parts[1]!;
    if (status === "SKIPPED" && /^\[\d+\]$/.test(name)) continue;
    // A first word that only starts with a status (`PASSEDx`) is a status SWE-bench's grading
    // counts neither way; here the line is not read, so a test named only there is missing.
    if (!(status in SWEBENCH_STATUS)) continue;
    map.delete(name);
    map.set(name, SWEBENCH_STATUS[status as keyof typeof SWEBENCH_STATUS]);
  }
  const out = new TestStatuses();
  for (const [name, status] of map) out.set(name, status);
  return out;
}
