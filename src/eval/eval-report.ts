/**
 * Writes results.json, junit.xml and report.html from what a results directory holds (run.json
 * and every attempt's result.json), so `eval report DIR` rebuilds exactly what the run wrote,
 * even after a run that was killed before it could.
 */
import { readFile, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { NotFoundError } from "../util/errors.js";
import { htmlReport } from "./html-report.js";
import { junitXml } from "./junit-report.js";
import {
  standingAttempt,
  swebenchInstanceReport,
  swebenchRunReport,
  tasksToClassify,
} from "./swebench-report.js";
import {
  attemptDir,
  readAttempts,
  readAttemptTexts,
  readRunInfo,
  writeReportFile,
  type AttemptTexts,
} from "./results-dir.js";
import { buildResults, type ResultsFile } from "./results-summary.js";

/** SWE-bench's run report shape (its `<model>.<run_id>.json`), beside drydock's results.json. */
export const SWEBENCH_REPORT = "swebench-report.json";

/** Text kept per file in report.html; the whole files stay in the task folders. */
const HTML_TEXT_CHARS = 200_000;
/** Test output kept per task in junit.xml. */
const JUNIT_OUTPUT_CHARS = 8_000;

/** The results of a directory: rebuilt from run.json and the task folders. */
export async function collectResults(dir: string): Promise<ResultsFile> {
  const run = await readRunInfo(dir);
  if (!run) {
    throw new NotFoundError(
      `${dir} holds no run.json; give the --out directory of a drydock eval run (or a results.json file to compare)`,
    );
  }
  return buildResults(run, await readAttempts(dir));
}

/** results.json of a directory if it has one, else rebuilt; a results.json file is read as it is. */
export async function loadResults(path: string): Promise<ResultsFile> {
  if (path.endsWith(".json")) return JSON.parse(await readFile(path, "utf8")) as ResultsFile;
  try {
    return await collectResults(path);
  } catch (error) {
    try {
      return JSON.parse(await readFile(join(path, "results.json"), "utf8")) as ResultsFile;
    } catch {
      throw error;
    }
  }
}

/**
 * Writes results.json, junit.xml, report.html and SWE-bench's shapes (swebench-report.json, and
 * report.json in each task's folder); returns the results they were made from.
 */
export async function writeReports(dir: string): Promise<ResultsFile> {
  const results = await collectResults(dir);
  const texts: Record<string, AttemptTexts> = {};
  const outputs = new Map<string, string>();
  for (const task of results.tasks) {
    for (const a of task.attempts) {
      const t = await readAttemptTexts(dir, task.id, a.attempt, HTML_TEXT_CHARS);
      texts[`${task.id}#${a.attempt}`] = t;
      if (a === task.attempts[task.attempts.length - 1] && t.testOutput) {
        outputs.set(
          task.id,
          t.testOutput.length > JUNIT_OUTPUT_CHARS
            ? `…${t.testOutput.slice(-JUNIT_OUTPUT_CHARS)}`
            : t.testOutput,
        );
      }
    }
  }
  await writeReportFile(dir, "results.json", JSON.stringify(results, null, 2) + "\n");
  await writeReportFile(dir, "junit.xml", junitXml(results, outputs));
  await writeReportFile(dir, "report.html", htmlReport(results, texts));
  // SWE-bench classifies why a task failed on its test output and its harness log (here agent.log).
  const logs = new Map<string, string>();
  for (const task of tasksToClassify(results)) {
    const a = standingAttempt(task);
    if (!a) continue;
    const t = await readAttemptTexts(dir, task.id, a.attempt);
    logs.set(task.id, `${t.testOutput}\n${t.agentLog}`);
  }
  await writeReportFile(
    dir,
    SWEBENCH_REPORT,
    JSON.stringify(swebenchRunReport(results, logs), null, 4) + "\n",
  );
  for (const task of results.tasks) {
    const a = standingAttempt(task);
    // Tests that reported no result: SWE-bench's report.json classifies their log.
    const silent =
      a?.tests?.grade?.by === "test_names" &&
      (a.tests.grade.tests_found === 0 || a.tests.grade.log_rejected === true);
    const output = silent ? (await readAttemptTexts(dir, task.id, a.attempt)).testOutput : "";
    const report = swebenchInstanceReport(task, output);
    const path = join(attemptDir(dir, task.id, 1), "report.json");
    // A task with nothing to report has no report.json, whatever an earlier run left there.
    if (report) await writeFile(path, JSON.stringify(report, null, 4) + "\n");
    else await rm(path, { force: true });
  }
  return results;
}
