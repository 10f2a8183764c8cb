/**
 * Python unittest's verbose output (`test_x (pkg.mod.Class.test_x) ... ok`, or before 3.11
 * `test_x (pkg.mod.Class) ... ok`) and its failure headers (`FAIL: test_x (pkg.mod.Class)`). Each
 * test is known as `pkg.mod.Class.test_x` and as `test_x (pkg.mod.Class)` (Django's style).
 */
import { TestStatuses, type TestStatus } from "./test-status.js";

const LINE =
  /^(\w+) \(([\w.]+)\)(?:\n.*?)? \.\.\. (ok|FAIL|ERROR|skipped\b.*|expected failure|unexpected success)\s*$/;
const HEADER = /^(FAIL|ERROR): (\w+) \(([\w.]+)\)/;

function statusOf(word: string): TestStatus {
  if (word === "ok" || word === "expected failure") return "passed";
  if (word.startsWith("skipped")) return "skipped";
  return "failed";
}

/** A test's dotted name, and its other name (Django's style) as an alias. */
function names(method: string, where: string): [string, string[]] {
  // Python 3.11+ puts the method at the end of the parenthesised name; older versions do not.
  const cls = where.endsWith(`.${method}`) ? where.slice(0, -method.length - 1) : where;
  return [`${cls}.${method}`, [`${method} (${cls})`, `${method} (${cls}.${method})`]];
}

export function parseUnittestOutput(text: string): TestStatuses {
  const out = new TestStatuses();
  const lines = text.split(/\r?\n/);
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    const header = HEADER.exec(line);
    if (header) {
      const [name, aliases] = names(header[2]!, header[3]!);
      out.set(name, "failed", aliases);
      continue;
    }
    // A test with a docstring prints it on the next line, before " ... ok".
    const joined = LINE.exec(line) ?? (i + 1 < lines.length ? LINE.exec(`${line}\n${lines[i + 1]}`) : null);
    if (joined) {
      const [name, aliases] = names(joined[1]!, joined[2]!);
      out.set(name, statusOf(joined[3]!), aliases);
    }
  }
  return out;
}
