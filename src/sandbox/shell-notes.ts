/** The words a shell result's `note` uses: what happened to a command and to its shell. */
import type { StopReport } from "./command-stop.js";
import type { RestoreOutcome } from "./shell-frame.js";

const count = (n: number, one: string, many: string) => `${n} ${n === 1 ? one : many}`;

/** How a stopped command ended, or why that could not be confirmed. `what`: "timed out after 3 s". */
export function stoppedNote(what: string, report: StopReport | Error, graceMs: number): string {
  if (report instanceof Error) {
    return `the command ${what}; stopping it could not be confirmed (${report.message}), so some of it may still be running in the box`;
  }
  const steps: string[] = [];
  if (report.interrupted > 0) steps.push(`${count(report.interrupted, "process", "processes")} got SIGINT`);
  if (report.killed > 0) {
    const what = steps.length ? "got" : `${report.killed === 1 ? "process" : "processes"} got`;
    steps.push(
      `${report.killed} ${what} SIGKILL (subshells, and what ignored SIGINT or still ran after ${graceMs / 1000} s)`,
    );
  }
  if (steps.length === 0) steps.push("it ran in the shell itself, which was ended");
  const end =
    report.left === 0
      ? "nothing of it is left running and the rest of the command did not run"
      : `${count(report.left, "process", "processes")} of it could not be killed and may still be running`;
  return `the command ${what} and was stopped as a whole: ${steps.join(", ")}; ${end}`;
}

/** What state the new shell was given. */
export function afterRestartNote(outcome: RestoreOutcome | "fresh"): string {
  switch (outcome) {
    case "restored":
      return "a new shell was started with the working directory, variables, functions, aliases and options from before the command";
    case "no-directory":
      return "a new shell was started with the variables, functions, aliases and options from before the command; its working directory is gone, so it starts in /workspace";
    default:
      return "a new shell was started, but the state from before the command could not be restored (its saved copy was missing or overwritten), so the working directory and environment were reset";
  }
}
