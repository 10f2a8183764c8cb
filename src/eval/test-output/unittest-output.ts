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

function names(method: string, where: string): string[] {
  // Python 3.11+ puts the method at the end of the parenthesised name; older versions do not.
  const cls = where.endsWith(`.${method}`) ? where.slice(0, -method.length - 1) : where;
  return [`${cls}.${method}`, `${method} (${cls})`];
}

export function parseUnittestOutput(text: string): TestStatuses {
  const out = new TestStatuses();
  const lines = text.split(/\r?\n/);
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    const header = HEADER.exec(line);
    if (header) {
      for (const name of names(header[2]!, header[3]!)) out.set(name, "failed");
      continue;
    }
    // A test with a docstring prints it on the next line, before " ... ok".
    const joined = LINE.exec(line) ?? (i + 1 < lines.length ? LINE.exec(`${line}\n${lines[i + 1]}`) : null);
    if (joined) for (const name of names(joined[1]!, joined[2]!)) out.set(name, statusOf(joined[3]!));
  }
  return out;
}
