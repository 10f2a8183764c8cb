/**
 * The eval verbs that work on finished runs and start no box: `eval merge` (shards into one run),
 * `eval report` (the reports again from the task folders) and `eval compare` (two runs).
 */
import type { Command } from "commander";
import { applyFailUnder, parseRate } from "./eval-gate.js";
import { readdir, rm, stat, writeFile } from "node:fs/promises";
import { dirname, resolve } from "node:path";
import { compareRuns, formatComparison, isRegression } from "../eval/compare-runs.js";
import { loadResults, writeReports } from "../eval/eval-report.js";
import { formatElapsed } from "../eval/progress-line.js";
import type { ResultsFile } from "../eval/results-summary.js";
import { mergeShards } from "../eval/shards.js";
import { FlagError } from "../util/errors.js";
import { terminalJson, terminalLine, terminalText } from "../util/terminal-text.js";
import { asFlagError } from "./flag-checks.js";
import { standingAttempt } from "../eval/swebench-report.js";
import { checkInstanceIds, onlyTasks } from "../eval/instance-ids.js";
import { collect, INSTANCE_IDS_HELP, instanceIdsFlag, TASK_ID_HELP } from "./eval-flags.js";
import { printOut, printErr } from "./terminal-out.js";

/** The task ids a run holds: its tasks, and its rows that could not run. */
function runIds(results: ResultsFile): string[] {
  return [...results.tasks.map((t) => t.id), ...results.invalid_tasks.flatMap((p) => p.id ?? [])];
}

/** Flagged tasks named one a line in the summary; the rest are counted. */
const FLAGGED_SHOWN = 10;

/**
 * The run's one line for a person (resolved, time, tokens, cost), a line per task the integrity
 * checks flagged, and where the report is.
 */
export function summaryLine(results: ResultsFile, out: string): string {
  const s = results.summary;
  const tokens = s.tokens.input + s.tokens.output;
  const wall = s.wall_ms ?? s.duration_ms;
  return [
    `resolved ${s.resolved}/${s.tasks} (${(s.resolved_rate * 100).toFixed(1)}%)`,
    s.integrity_flagged ? `${s.integrity_flagged} flagged by the integrity checks` : undefined,
    results.run.attempts > 1 ? passAtKText(results) : undefined,
    `time ${wall < 60_000 ? `${(wall / 1000).toFixed(1)} s` : formatElapsed(wall)}`,
    tokens ? `${tokens.toLocaleString("en-US")} tokens` : undefined,
    s.cost_usd ? `$${s.cost_usd.toFixed(4)}` : undefined,
  ]
    .filter(Boolean)
    .join(" · ")
    .concat(flaggedLines(results))
    .concat(`\nreport: ${terminalLine(resolve(out, "report.html"))}`);
}

/** "pass@1 58.3% · pass@3 66.7%": the unbiased estimates at 1 and at --attempts. */
function passAtKText(results: ResultsFile): string {
  const k = String(results.run.attempts);
  const at = results.summary.pass_at_k;
  const pct = (key: string) => `${((at[key]?.value ?? 0) * 100).toFixed(1)}%`;
  return `pass@1 ${pct("1")} · pass@${k} ${pct(k)}`;
}

function flaggedLines(results: ResultsFile): string {
  const flagged = results.tasks.filter((t) => t.integrity_flags);
  const lines = flagged.slice(0, FLAGGED_SHOWN).map((t) => {
    const a = t.attempts.find((x) => x.integrity?.reason) ?? standingAttempt(t);
    // The reason names files the agent chose: made safe for a terminal.
    return `\nflagged: ${terminalLine(t.id)}: ${t.status}: ${terminalLine(a?.integrity?.reason ?? t.integrity_flags!.join(", "))}`;
  });
  if (flagged.length > FLAGGED_SHOWN)
    lines.push(`\nflagged: ${flagged.length - FLAGGED_SHOWN} more in results.json`);
  return lines.join("");
}

export function registerEvalResultCommands(evalCommand: Command): void {
  evalCommand
    .command("merge")
    .description("put the results of shards (eval --shard K/N) together into one run, with every report")
    .argument("<dirs...>", "the shards' --out directories")
    .requiredOption("--out <dir>", "where the merged run goes")
    .option("--allow-missing", "merge even when some shards are not given (their tasks are left out)")
    .option("--force", "merge into a --out that already holds something, removing what it held")
    .option("--fail-under <rate>", "exit 1 when the merged run's resolved rate is below RATE (0.8 or 80%)")
    .action(
      async (
        dirs: string[],
        flags: { out: string; allowMissing?: boolean; force?: boolean; failUnder?: string },
      ) => {
        const failUnder = flags.failUnder === undefined ? undefined : parseRate(flags.failUnder);
        const out = resolve(flags.out);
        if (dirs.some((d) => resolve(d) === out)) {
          throw new FlagError("--out", `${out} is one of the shards; merge into another directory`);
        }
        const held = await readdir(out).catch(() => [] as string[]);
        if (held.length > 0) {
          if (!flags.force) {
            throw new FlagError(
              "--out",
              `${out} already holds ${held.length} entr${held.length === 1 ? "y" : "ies"} (${held.slice(0, 3).join(", ")}); a merge would mix two runs. Choose an empty or new directory, or pass --force to replace what it holds`,
            );
          }
          await rm(out, { recursive: true, force: true });
        }
        const merged = await asFlagError(
          () =>
            mergeShards(
              dirs.map((d) => resolve(d)),
              out,
              { allowMissing: flags.allowMissing },
            ),
          { DIR: "DIR" },
        );
        const results = await writeReports(out);
        printErr(
          `[eval] merged ${merged.shards} shard(s) of ${merged.run.merged_shards?.[0]?.count ?? "?"}\n`,
        );
        if (merged.missing.length > 0) {
          printErr(
            `[eval] shard(s) ${merged.missing.join(", ")} not given: their tasks are not in this run\n`,
          );
        }
        printErr(`[eval] ${summaryLine(results, out)}\n`);
        if (failUnder !== undefined) applyFailUnder(results.summary.resolved_rate, failUnder);
      },
    );

  evalCommand
    .command("report")
    .description("rebuild results.json, junit.xml and report.html of a results directory")
    .argument("<dir>", "the --out directory of a run")
    .action(async (dir: string) => {
      await existingRun(dir, "DIR");
      const results = await writeReports(resolve(dir));
      printErr(`${summaryLine(results, dir)}\n`);
    });

  evalCommand
    .command("compare")
    .description("which tasks changed outcome between two runs (directories or results.json files)")
    .argument("<a>", "the earlier run")
    .argument("<b>", "the later run")
    .option("--json", "print the comparison as JSON")
    .option(
      "--fail-on-regression",
      "exit 1 when a task resolved in A is not resolved in B, or is missing from B",
    )
    .option("--out <file>", "also write the comparison as JSON to a file")
    .option("--instance-ids <ids...>", INSTANCE_IDS_HELP)
    .option("--task <id>", TASK_ID_HELP, collect)
    .action(
      async (
        a: string,
        b: string,
        flags: {
          json?: boolean;
          failOnRegression?: boolean;
          out?: string;
          instanceIds?: string[];
          task?: string[];
        },
      ) => {
        await existingRun(a, "A");
        await existingRun(b, "B");
        const ids = await instanceIdsFlag(flags);
        if (flags.out) {
          const dir = dirname(resolve(flags.out));
          if (!(await stat(dir).catch(() => undefined))?.isDirectory()) {
            throw new FlagError("--out", `${dir} is not a directory; give a file in one that exists`);
          }
        }
        let before = await loadResults(a);
        let after = await loadResults(b);
        if (ids) {
          // Only the tasks asked for, on both sides; an id neither run has is a typo.
          await asFlagError(() =>
            checkInstanceIds(ids, [...runIds(before), ...runIds(after)], `${a} or ${b}`),
          );
          before = onlyTasks(before, ids);
          after = onlyTasks(after, ids);
        }
        const comparison = compareRuns(before, after);
        if (flags.out) await writeFile(flags.out, JSON.stringify(comparison, null, 2) + "\n");
        printOut(
          flags.json
            ? terminalJson(comparison, 2) + "\n"
            : // Task ids and reasons come from task files and agents' runs.
              terminalText(formatComparison(comparison, { before: a, after: b })),
        );
        if (flags.failOnRegression && isRegression(comparison)) process.exitCode = 1;
      },
    );
}

/** A run's --out directory (or its results.json) that exists; else a usage error naming the argument. */
async function existingRun(path: string, argument: string): Promise<void> {
  const info = await stat(resolve(path)).catch(() => undefined);
  if (!info) {
    throw new FlagError(
      argument,
      `${resolve(path)} does not exist; give a run's --out directory or its results.json`,
    );
  }
}
