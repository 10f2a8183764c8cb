/**
 * Task files as text: JSONL (one task a line) or YAML (one task, or a list of them, per file).
 * Pure: each bad task becomes a problem naming its line and field, and the others still parse.
 */
import { LineCounter, parseAllDocuments, isMap, isSeq, type Document, type Node } from "yaml";
import type { z } from "zod";
import { evalTaskSchema, KNOWN_TASK_FIELDS, type EvalTaskInput } from "./eval-task.js";
import { isSwebenchRow, rowToTask } from "./swebench-rows.js";

export interface ParseOptions {
  /** The test command of SWE-bench rows that carry none (see swebench-rows.ts). */
  swebenchTestCmd?: string;
}

export interface TaskProblem {
  /** The file (as the user named it). */
  source: string;
  /** 1-based line, where known. */
  line?: number;
  /** The field at fault ("id", "fail_to_pass[2]"), or "(json)" / "(yaml)" for unreadable text. */
  field: string;
  message: string;
  /** The task's id (a row's instance_id), when the entry names one: reports count it as an error. */
  id?: string;
  /** With `--patches`: whether the predictions answer this task that could not run, and how. */
  prediction?: "given" | "empty";
}

export interface ParsedTask {
  task: EvalTaskInput;
  source: string;
  line?: number;
  /** A SWE-bench row: its repo is "owner/name", to be mapped to a local clone. */
  swebench?: boolean;
}

export interface ParsedTasks {
  tasks: ParsedTask[];
  problems: TaskProblem[];
  /** Fields the schema does not know (kept out of the task); not errors, since SWE-bench rows carry many. */
  warnings: TaskProblem[];
}

export function formatProblem(p: TaskProblem): string {
  return `${p.source}${p.line !== undefined ? `:${p.line}` : ""}: ${p.field}: ${p.message}`;
}

function issueField(issue: z.core.$ZodIssue): string {
  let out = "";
  for (const key of issue.path) {
    if (typeof key === "number") out += `[${key}]`;
    else out += out === "" ? String(key) : `.${String(key)}`;
  }
  return out || "(task)";
}

/** Drydock's task fields as a SWE-bench row names them. */
const ROW_NAMES: Record<string, string> = {
  id: "instance_id",
  ref: "base_commit",
  prompt: "problem_statement",
  fail_to_pass: "FAIL_TO_PASS",
  pass_to_pass: "PASS_TO_PASS",
  environment_ref: "environment_setup_commit",
  test_cmd:
    "test_patch (the test command is made from its files; or give the row a test_cmd, or --swebench-test-cmd)",
};

function rowFieldName(field: string): string {
  const head = /^[a-z_]+/.exec(field)?.[0] ?? field;
  const name = ROW_NAMES[head];
  return name === undefined ? field : name + field.slice(head.length);
}

function issueMessage(issue: z.core.$ZodIssue): string {
  if (issue.code === "invalid_type" && /received undefined/.test(issue.message)) return "is required";
  if (issue.code === "unrecognized_keys") return `unknown field(s) ${issue.keys.join(", ")}`;
  return issue.message;
}

/** Validates one decoded value; `lineOf` maps a field path to a line where the format knows it. */
function check(
  value: unknown,
  source: string,
  line: number | undefined,
  out: ParsedTasks,
  lineOf: (path: readonly PropertyKey[]) => number | undefined = () => line,
  options: ParseOptions = {},
): void {
  const named = (value as { id?: unknown; instance_id?: unknown } | null) ?? {};
  const rawId = typeof named === "object" ? (named.instance_id ?? named.id) : undefined;
  const id = typeof rawId === "string" && rawId !== "" ? { id: rawId } : {};
  let swebench = false;
  if (isSwebenchRow(value)) {
    // SWE-bench grades by FAIL_TO_PASS at base_commit: without either a row would resolve with no
    // fix at all (its other tests already pass), or be graded on whatever the clone holds now.
    let missing = false;
    for (const [field, why] of [
      ["base_commit", "the commit the task starts from"],
      ["FAIL_TO_PASS", "the tests the fix must make pass, as JSON text of a list"],
    ] as const) {
      if (value[field] === undefined || value[field] === null || value[field] === "") {
        out.problems.push({ source, line, field, message: `is required (${why})`, ...id });
        missing = true;
      }
    }
    if (missing) return;
    const converted = rowToTask(value, options.swebenchTestCmd);
    if (converted.unknown.length > 0) {
      out.warnings.push({
        source,
        line,
        field: converted.unknown.join(", "),
        message: "not a SWE-bench row field; ignored",
      });
    }
    value = converted.task;
    swebench = true;
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    out.problems.push({
      source,
      line,
      field: "(task)",
      message: "must be an object with id, repo, prompt, test_cmd",
    });
    return;
  }
  const unknown = swebench ? [] : Object.keys(value).filter((k) => !KNOWN_TASK_FIELDS.has(k));
  if (unknown.length > 0) {
    out.warnings.push({ source, line, field: unknown.join(", "), message: "not a task field; ignored" });
  }
  const parsed = evalTaskSchema.safeParse(value);
  if (!parsed.success) {
    for (const issue of parsed.error.issues) {
      const field = issueField(issue);
      out.problems.push({
        source,
        line: lineOf(issue.path) ?? line,
        // A row's problems name the row's own fields.
        field: swebench ? rowFieldName(field) : field,
        message: issueMessage(issue),
        ...id,
      });
    }
    return;
  }
  if (swebench && (parsed.data.fail_to_pass ?? []).length === 0) {
    out.problems.push({
      source,
      line,
      field: "FAIL_TO_PASS",
      message:
        "is an empty list: the task would be resolved with no fix at all; name the tests the fix makes pass",
    });
    return;
  }
  out.tasks.push({ task: parsed.data, source, line, ...(swebench ? { swebench } : {}) });
}

/** JSONL: one JSON object a line; blank lines and lines starting with `#` or `//` are skipped. */
export function parseJsonlTasks(text: string, source: string, options: ParseOptions = {}): ParsedTasks {
  const out: ParsedTasks = { tasks: [], problems: [], warnings: [] };
  const lines = text.split(/\r?\n/);
  lines.forEach((raw, index) => {
    const line = index + 1;
    const trimmed = raw.trim();
    if (trimmed === "" || trimmed.startsWith("#") || trimmed.startsWith("//")) return;
    let value: unknown;
    try {
      value = JSON.parse(trimmed);
    } catch (error) {
      out.problems.push({
        source,
        line,
        field: "(json)",
        message: `not valid JSON: ${(error as Error).message}`,
      });
      return;
    }
    check(value, source, line, out, undefined, options);
  });
  return out;
}

/** A .json file holding one list of tasks or SWE-bench rows (a dataset saved as JSON). */
export function parseJsonListTasks(text: string, source: string, options: ParseOptions = {}): ParsedTasks {
  const out: ParsedTasks = { tasks: [], problems: [], warnings: [] };
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    out.problems.push({ source, field: "(json)", message: `not valid JSON: ${(error as Error).message}` });
    return out;
  }
  if (!Array.isArray(value)) {
    out.problems.push({ source, field: "(json)", message: "a .json task file must hold a list of tasks" });
    return out;
  }
  value.forEach((item, i) => {
    const before = out.problems.length;
    check(item, source, undefined, out, undefined, options);
    // No lines in a one-line JSON document: name the item instead.
    for (const p of out.problems.slice(before)) p.field = `[${i}].${p.field}`;
  });
  return out;
}

/** YAML: a file holds one task, a list of tasks, or several `---` documents. */
export function parseYamlTasks(text: string, source: string, options: ParseOptions = {}): ParsedTasks {
  const out: ParsedTasks = { tasks: [], problems: [], warnings: [] };
  const counter = new LineCounter();
  const docs = parseAllDocuments(text, { lineCounter: counter });
  const lineAt = (node: Node | null | undefined): number | undefined =>
    node?.range ? counter.linePos(node.range[0]).line : undefined;
  for (const doc of Array.isArray(docs) ? docs : [docs]) {
    const d = doc as Document.Parsed;
    if (d.errors.length > 0) {
      for (const e of d.errors) {
        out.problems.push({
          source,
          line: e.linePos?.[0]?.line,
          field: "(yaml)",
          message: e.message.split("\n")[0] ?? e.message,
        });
      }
      continue;
    }
    if (d.contents === null) continue;
    const items: Node[] = isSeq(d.contents) ? (d.contents.items as Node[]) : [d.contents as Node];
    for (const node of items) {
      const value = (node as { toJSON?: () => unknown }).toJSON?.() ?? node;
      const line = lineAt(node);
      const lineOf = (path: readonly PropertyKey[]) => {
        if (!isMap(node) || path.length === 0) return line;
        const pair = node.items.find((p) => (p.key as { value?: unknown })?.value === path[0]);
        return lineAt((pair?.value as Node | undefined) ?? (pair?.key as Node | undefined)) ?? line;
      };
      check(value, source, line, out, lineOf, options);
    }
  }
  return out;
}

/** Later tasks reusing an id are problems; the first keeps the id. */
export function rejectDuplicateIds(parsed: ParsedTasks): ParsedTasks {
  const seen = new Map<string, ParsedTask>();
  const tasks: ParsedTask[] = [];
  const problems = [...parsed.problems];
  for (const t of parsed.tasks) {
    const first = seen.get(t.task.id);
    if (first) {
      problems.push({
        source: t.source,
        line: t.line,
        field: "id",
        message: `${JSON.stringify(t.task.id)} is already used at ${first.source}${first.line !== undefined ? `:${first.line}` : ""}; ids must be unique`,
      });
      continue;
    }
    seen.set(t.task.id, t);
    tasks.push(t);
  }
  return { tasks, problems, warnings: parsed.warnings };
}
