/**
 * junit.xml, as CI systems read it. Failed tests (and unresolved tasks graded by exit code) are
 * failures; tasks that broke (agent, box, setup, time limit) are errors; tasks not run yet, and
 * tasks without a prediction (incomplete), are skipped. A task the integrity checks flagged carries them as a property of each testcase and, in
 * a testcase of its own, as a failure when it was not resolved for them (their tests all passing
 * would otherwise show nothing wrong). Pure.
 */
import type { AttemptResult } from "./attempt-result.js";
import type { ResultsFile, TaskSummary } from "./results-summary.js";

/** Characters XML 1.0 cannot hold at all, even escaped. */
const INVALID_XML = /[^\t\n\r\u0020-\uD7FF\uE000-\uFFFD\u{10000}-\u{10FFFF}]/gu;

export function xmlEscape(text: string): string {
  return text
    .replace(INVALID_XML, "\uFFFD")
    .replace(/&/g, "&amp;")
    .replace(/</g, "&lt;")
    .replace(/>/g, "&gt;")
    .replace(/"/g, "&quot;")
    .replace(/'/g, "&apos;");
}

const seconds = (ms: number) => (ms / 1000).toFixed(3);

function attemptLines(task: TaskSummary): string {
  return task.attempts
    .map((a) => {
      const flagged = a.integrity?.reason ? `flagged: ${a.integrity.reason}` : undefined;
      const why = [a.error ?? a.tests?.grade?.reason, flagged].filter(Boolean).join("; ");
      return `attempt ${a.attempt}: ${a.status}${why ? ` (${why})` : ""}`;
    })
    .join("\n");
}

/** The attempt a task's suite shows: the one that resolved it, else the last. */
function shownAttempt(task: TaskSummary): AttemptResult | undefined {
  return task.attempts.find((a) => a.resolved) ?? task.attempts[task.attempts.length - 1];
}

interface Case {
  name: string;
  time: number;
  failure?: { type: string; message: string; detail: string };
  error?: { type: string; message: string; detail: string };
  skipped?: string;
  output?: string;
  properties?: Array<[string, string]>;
}

/** One testcase per graded test; one for the whole task when it graded by exit code or never ran its tests. */
function casesOf(task: TaskSummary, output: string | undefined): Case[] {
  const shown = shownAttempt(task);
  const detail = attemptLines(task);
  const grade = shown?.tests?.grade;
  if (task.status === "not_run")
    return [{ name: task.id, time: 0, skipped: "not run (the run was stopped first)" }];
  // No prediction: nothing ran, as SWE-bench counts the instance incomplete (not an error).
  if (task.status === "incomplete")
    return [
      { name: task.id, time: 0, skipped: `incomplete: ${shown?.error ?? "no prediction for this task"}` },
    ];
  if (grade?.by === "test_names" && (task.status === "resolved" || task.status === "unresolved")) {
    const cases: Case[] = [];
    for (const [list, names] of [
      ["FAIL_TO_PASS", grade.fail_to_pass],
      ["PASS_TO_PASS", grade.pass_to_pass],
    ] as const) {
      if (!names) continue;
      const skipped = new Set(names.skipped ?? []);
      for (const name of names.passed) {
        cases.push(
          skipped.has(name)
            ? {
                name,
                time: 0,
                skipped: `${list}: skipped by the test runner (maintained, as SWE-bench grades)`,
              }
            : { name, time: 0 },
        );
      }
      for (const name of names.failed) {
        cases.push({
          name,
          time: 0,
          failure: { type: list, message: `${list}: the test did not pass`, detail },
        });
      }
      for (const name of names.missing) {
        cases.push({
          name,
          time: 0,
          failure: { type: list, message: `${list}: the test output does not report this test`, detail },
        });
      }
    }
    const flagged = shown?.integrity?.reason;
    if (flagged) {
      // Failed for the flags alone: every graded test passed, yet the attempt is not resolved.
      const failed = task.status === "unresolved" && grade.resolved;
      cases.push({
        name: "integrity",
        time: 0,
        ...(failed
          ? { failure: { type: "integrity", message: `not resolved: flagged: ${flagged}`, detail } }
          : {}),
      });
    }
    const last = cases[cases.length - 1];
    if (last) {
      // The task's time and output go with its last test, so suite totals stay right.
      last.time = task.duration_ms;
      last.output = output;
    }
    return withFlags(cases, shown);
  }
  const flagged = shown?.integrity?.reason ? `; flagged: ${shown.integrity.reason}` : "";
  const message =
    `${task.status}${shown?.error ? `: ${shown.error}` : grade ? `: ${grade.reason}` : ""}${flagged}`.slice(
      0,
      500,
    );
  const one: Case = { name: task.id, time: task.duration_ms, output };
  if (task.status === "unresolved") one.failure = { type: "unresolved", message, detail };
  else if (task.status !== "resolved") one.error = { type: task.status, message, detail };
  return withFlags([one], shown);
}

/** Each testcase of a flagged attempt carries its flags and why, for CI views that list properties. */
function withFlags(cases: Case[], shown: AttemptResult | undefined): Case[] {
  const integrity = shown?.integrity;
  if (!integrity?.flags.length) return cases;
  const properties: Array<[string, string]> = [
    ["integrity_flags", integrity.flags.join(",")],
    ["integrity_reason", integrity.reason ?? ""],
  ];
  return cases.map((c) => ({ ...c, properties }));
}

function testcaseXml(classname: string, c: Case): string {
  const lines = [
    `      <testcase classname="${xmlEscape(classname)}" name="${xmlEscape(c.name)}" time="${seconds(c.time)}">`,
  ];
  if (c.properties) {
    lines.push(
      "        <properties>",
      ...c.properties.map(([k, v]) => `          <property name="${xmlEscape(k)}" value="${xmlEscape(v)}"/>`),
      "        </properties>",
    );
  }
  if (c.skipped) lines.push(`        <skipped message="${xmlEscape(c.skipped)}"/>`);
  for (const [tag, f] of [
    ["failure", c.failure],
    ["error", c.error],
  ] as const) {
    if (f) {
      lines.push(
        `        <${tag} message="${xmlEscape(f.message)}" type="${xmlEscape(f.type)}">${xmlEscape(f.detail)}</${tag}>`,
      );
    }
  }
  if (c.output) lines.push(`        <system-out>${xmlEscape(c.output)}</system-out>`);
  lines.push("      </testcase>");
  return lines.join("\n");
}

interface Counts {
  tests: number;
  failures: number;
  errors: number;
  skipped: number;
  time: number;
}

const countsAttr = (c: Counts) =>
  `tests="${c.tests}" failures="${c.failures}" errors="${c.errors}" skipped="${c.skipped}" time="${seconds(c.time)}"`;

function countCases(cases: Case[]): Counts {
  return {
    tests: cases.length,
    failures: cases.filter((c) => c.failure).length,
    errors: cases.filter((c) => c.error).length,
    skipped: cases.filter((c) => c.skipped).length,
    time: cases.reduce((sum, c) => sum + c.time, 0),
  };
}

/**
 * A suite per task, named by its id, with a testcase per graded test (FAIL_TO_PASS and
 * PASS_TO_PASS names), so CI shows which test failed; a task graded by exit code, or stopped
 * before its tests, is one testcase. Every suite carries the run's identity as properties.
 * @param outputs test output per task id (the last attempt's; kept short by the caller).
 */
export function junitXml(results: ResultsFile, outputs: ReadonlyMap<string, string> = new Map()): string {
  const { run, summary, tasks } = results;
  const props: Array<[string, string | number | undefined]> = [
    ["run_id", run.run_id],
    ["agent", run.agent],
    ["agent_version", run.agent_version],
    ["model", run.model],
    ["llm", run.llm],
    ["attempts", run.attempts],
    ["concurrency", run.concurrency],
    ["resolved_rate", summary.resolved_rate],
    ["tokens_input", summary.tokens.input],
    ["tokens_output", summary.tokens.output],
    ["cost_usd", summary.cost_usd],
  ];
  // The run's identity, then the task's own: the image its tests ran in and its build time.
  const propLines = (task: TaskSummary) => {
    const shown = shownAttempt(task);
    return [
      "      <properties>",
      ...[
        ...props,
        ["environment_image", shown?.environment_image] as const,
        ["environment_build_ms", shown?.environment_build_ms] as const,
      ]
        .filter(([, v]) => v !== undefined)
        .map(([k, v]) => `        <property name="${k}" value="${xmlEscape(String(v))}"/>`),
      "      </properties>",
    ];
  };
  const total: Counts = { tests: 0, failures: 0, errors: 0, skipped: 0, time: 0 };
  const suites: string[] = [];
  for (const task of tasks) {
    const cases = casesOf(task, outputs.get(task.id));
    const counts = countCases(cases);
    for (const k of Object.keys(total) as Array<keyof Counts>) total[k] += counts[k];
    suites.push(
      `  <testsuite name="${xmlEscape(task.id)}" ${countsAttr(counts)} timestamp="${xmlEscape(task.attempts[0]?.started_at ?? run.started_at)}">`,
      ...propLines(task),
      ...cases.map((c) => testcaseXml(task.id, c)),
      "  </testsuite>",
    );
  }
  const name = xmlEscape(`drydock eval ${run.run_id} (${run.agent}${run.model ? `, ${run.model}` : ""})`);
  return [
    '<?xml version="1.0" encoding="UTF-8"?>',
    `<testsuites name="${name}" ${countsAttr(total)}>`,
    ...suites,
    "</testsuites>",
    "",
  ].join("\n");
}
