/**
 * junit.xml: one testcase per task, as CI systems read it. Unresolved tasks are failures; tasks
 * that broke (agent, box, setup, time limit) are errors; tasks not run yet are skipped. Pure.
 */
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
      const why = a.error ?? a.tests?.grade?.reason ?? "";
      return `attempt ${a.attempt}: ${a.status}${why ? ` (${why})` : ""}`;
    })
    .join("\n");
}

function testcase(task: TaskSummary, agent: string, output: string | undefined): string {
  const open = `    <testcase classname="${xmlEscape(`drydock.eval.${agent}`)}" name="${xmlEscape(task.id)}" time="${seconds(task.duration_ms)}">`;
  const lines = [open];
  const detail = xmlEscape(attemptLines(task));
  const first = task.attempts[task.attempts.length - 1];
  const message = xmlEscape(
    `${task.status}${first?.error ? `: ${first.error}` : first?.tests?.grade ? `: ${first.tests.grade.reason}` : ""}`.slice(
      0,
      500,
    ),
  );
  if (task.status === "not_run") lines.push(`      <skipped message="not run (the run was stopped first)"/>`);
  else if (task.status === "unresolved") {
    lines.push(`      <failure message="${message}" type="unresolved">${detail}</failure>`);
  } else if (task.status !== "resolved") {
    lines.push(`      <error message="${message}" type="${task.status}">${detail}</error>`);
  }
  if (output) lines.push(`      <system-out>${xmlEscape(output)}</system-out>`);
  lines.push("    </testcase>");
  return lines.join("\n");
}

/** @param outputs test output per task id (the last attempt's; kept short by the caller). */
export function junitXml(results: ResultsFile, outputs: ReadonlyMap<string, string> = new Map()): string {
  const { run, summary, tasks } = results;
  const failures = tasks.filter((t) => t.status === "unresolved").length;
  const skipped = tasks.filter((t) => t.status === "not_run").length;
  const errors = tasks.length - summary.resolved - failures - skipped;
  const time = seconds(summary.duration_ms);
  const counts = `tests="${tasks.length}" failures="${failures}" errors="${errors}" skipped="${skipped}" time="${time}"`;
  const props: Array<[string, string | number | undefined]> = [
    ["agent", run.agent],
    ["model", run.model],
    ["llm", run.llm],
    ["attempts", run.attempts],
    ["concurrency", run.concurrency],
    ["resolved_rate", summary.resolved_rate],
    ["tokens_input", summary.tokens.input],
    ["tokens_output", summary.tokens.output],
    ["cost_usd", summary.cost_usd],
  ];
  const suiteName = xmlEscape(`drydock eval (${run.agent})`);
  return [
    '<?xml version="1.0" encoding="UTF-8"?>',
    `<testsuites name="drydock eval" ${counts}>`,
    `  <testsuite name="${suiteName}" ${counts} timestamp="${xmlEscape(run.started_at)}">`,
    "    <properties>",
    ...props
      .filter(([, v]) => v !== undefined)
      .map(([k, v]) => `      <property name="${k}" value="${xmlEscape(String(v))}"/>`),
    "    </properties>",
    ...tasks.map((t) => testcase(t, run.agent, outputs.get(t.id))),
    "  </testsuite>",
    "</testsuites>",
    "",
  ].join("\n");
}
