/**
 * vitest and jest: their JSON reports (`vitest --reporter=json`, `jest --json`), vitest's verbose
 * lines (`✓ test/a.test.ts > suite > name 2ms`) and failure lines (`FAIL test/a.test.ts > suite >
 * name`), and jest's verbose tree (`PASS file`, describe names indented, `✓ name (3 ms)`). A test
 * is known by its names joined with " > " (with and without the file) and, as jest's fullName,
 * joined with spaces.
 */
import { TestStatuses, type TestStatus } from "./test-status.js";

const JSON_STATUS: Record<string, TestStatus> = {
  passed: "passed",
  failed: "failed",
  pending: "skipped",
  skipped: "skipped",
  todo: "skipped",
  disabled: "skipped",
};

const PASS_MARK = "✓✔√";
const FAIL_MARK = "×✗✕✖";
const SKIP_MARK = "↓○";
const MARKED = new RegExp(`^(\\s*)([${PASS_MARK}${FAIL_MARK}${SKIP_MARK}])\\s+(.+?)\\s*$`);
const DURATION = /\s+(?:\(\s*)?\d+(?:\.\d+)?\s*m?s\)?$/;
const VITEST_FAIL = /^\s*FAIL\s+(\S+\s+>\s+.+?)\s*$/;
const JEST_FILE = /^\s*(PASS|FAIL)\s+(\S+)/;

function markStatus(mark: string): TestStatus {
  if (PASS_MARK.includes(mark)) return "passed";
  if (FAIL_MARK.includes(mark)) return "failed";
  return "skipped";
}

/** Registers a test under " > " names with and without the file, and jest's space-joined fullName. */
function addNames(out: TestStatuses, parts: string[], status: TestStatus, file?: string): void {
  out.set(parts.join(" > "), status);
  out.set(parts.join(" "), status);
  if (file) out.set([file, ...parts].join(" > "), status);
}

/** JSON objects in the text that start a line (reports are printed on their own). */
export function jsonObjectsIn(text: string): unknown[] {
  const found: unknown[] = [];
  let at = 0;
  while (at < text.length) {
    const start = text.indexOf("{", at);
    if (start < 0) break;
    if (start > 0 && text[start - 1] !== "\n") {
      at = start + 1;
      continue;
    }
    const end = matchingBrace(text, start);
    if (end < 0) break;
    try {
      found.push(JSON.parse(text.slice(start, end + 1)));
      at = end + 1;
    } catch {
      at = start + 1;
    }
  }
  return found;
}

function matchingBrace(text: string, start: number): number {
  let depth = 0;
  let inString = false;
  for (let i = start; i < text.length; i++) {
    const c = text[i];
    if (inString) {
      if (c === "\\") i++;
      else if (c === '"') inString = false;
    } else if (c === '"') inString = true;
    else if (c === "{") depth++;
    else if (c === "}" && --depth === 0) return i;
  }
  return -1;
}

interface JsonReport {
  testResults?: Array<{
    name?: string;
    assertionResults?: Array<{
      ancestorTitles?: string[];
      title?: string;
      fullName?: string;
      status?: string;
    }>;
  }>;
}

function fromJson(report: JsonReport, out: TestStatuses): void {
  for (const file of report.testResults ?? []) {
    for (const a of file.assertionResults ?? []) {
      const status = JSON_STATUS[a.status ?? ""];
      if (!status || !a.title) continue;
      addNames(out, [...(a.ancestorTitles ?? []), a.title], status);
      if (a.fullName) out.set(a.fullName, status);
    }
  }
}

export function parseJestOutput(text: string): TestStatuses {
  const out = new TestStatuses();
  for (const value of jsonObjectsIn(text)) {
    if (value && typeof value === "object" && Array.isArray((value as JsonReport).testResults)) {
      fromJson(value as JsonReport, out);
    }
  }
  // jest's verbose tree: describe names by indentation, inside a PASS/FAIL file block.
  let describes: Array<{ indent: number; name: string }> = [];
  let inTree = false;
  for (const line of text.split(/\r?\n/)) {
    const failed = VITEST_FAIL.exec(line);
    if (failed) {
      const [file, ...parts] = failed[1]!.split(/\s+>\s+/);
      addNames(out, parts, "failed", file);
      continue;
    }
    const header = JEST_FILE.exec(line);
    if (header) {
      describes = [];
      inTree = true;
      continue;
    }
    const marked = MARKED.exec(line);
    if (marked) {
      const indent = marked[1]!.length;
      const name = marked[3]!.replace(DURATION, "");
      const status = markStatus(marked[2]!);
      if (name.includes(" > ")) {
        // vitest: "file > suite > name".
        const [file, ...parts] = name.split(/\s+>\s+/);
        if (parts.length > 0) addNames(out, parts, status, file);
        continue;
      }
      if (inTree) {
        describes = describes.filter((d) => d.indent < indent);
        addNames(out, [...describes.map((d) => d.name), name], status);
      }
      continue;
    }
    const trimmed = line.trim();
    if (!inTree || trimmed === "") continue;
    // Failure details and the summary end the tree of this file.
    if (trimmed.startsWith("●") || /^(Tests?|Test Suites|Snapshots|Time):/.test(trimmed)) {
      inTree = false;
      continue;
    }
    const indent = line.length - line.trimStart().length;
    if (indent > 0) {
      describes = describes.filter((d) => d.indent < indent);
      describes.push({ indent, name: trimmed });
    }
  }
  return out;
}
