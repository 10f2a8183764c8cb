/**
 * How many results the task's own tests report without the agent: in the fresh box the tests run
 * in, before the agent's diff is applied, the test patch goes on, test_cmd runs once and its
 * results are counted; then the working tree is put back as it was. A graded run that reports far
 * fewer (test-integrity.ts) printed something other than the suite: output faked by the code under
 * test, a run cut short. Nothing the agent wrote is in the box yet, so nothing it wrote sways the count.
 * The count depends on the task's base alone, so it is taken once per base (base-count-cache.ts).
 */
import type { Session } from "../session/session.js";
import { CommandExitError } from "../util/errors.js";
import { applyPatchInBox } from "./box-patch.js";
import { EVAL_DIR_IN_BOX } from "./box-tree.js";
import type { EvalTask } from "./eval-task.js";
import { parseTestOutput } from "./test-output/test-results.js";

// Every tracked file the run changed or removed comes back from the tree; files it added that git
// would see are removed. Ignored files (caches) stay: what wrote them is the task's own code.
const RESET = `
set -e
cd /workspace
export GIT_INDEX_FILE=${EVAL_DIR_IN_BOX}/base-reset.index
git read-tree "$1"
git update-index -q --refresh >/dev/null 2>&1 || true
git diff-files --name-only -z | xargs -0 -r git checkout-index -f --
git -c core.excludesFile=/dev/null ls-files -z --others --exclude-standard | xargs -0 -r rm -f --
rm -f "$GIT_INDEX_FILE"
`;

export interface BaseTestCount {
  /** Results the output held; undefined when the run could not say (the patch, a time limit). */
  count?: number;
  /** Why there is no count. */
  note?: string;
  /** The count ran out of its own time limit (a result not kept for later runs). */
  timedOut?: boolean;
}

/** What the count's run is, for the test log's line. */
export const BASE_COUNT_WHAT =
  "(drydock's count: the task's tests without the agent's diff, on a clock of their own; the graded run follows)";

/** The test log's line for a count, with where it came from (`origin`). */
export function baseCountLog(base: BaseTestCount, origin: string): string {
  const what =
    base.count !== undefined ? `${base.count} result(s)` : `not counted: ${base.note ?? "unknown"}`;
  return `$ ${BASE_COUNT_WHAT}: ${what} [${origin}]\n`;
}

/** Runs the task's tests on `tree` (the box's tree after setup) plus the test patch, counts them, puts the tree back. */
export async function countBaseTests(
  session: Session,
  task: EvalTask,
  tree: string,
  options: { timeoutMs: number; signal: AbortSignal },
): Promise<BaseTestCount> {
  let count: number | undefined;
  let note = "";
  let timedOut = false;
  try {
    const patched =
      task.test_patch === undefined ||
      (await applyPatchInBox(session.box, task.test_patch, "base-test", options.signal)).applied;
    if (!patched) note = "test_patch does not apply";
    else {
      // No bytecode: a .pyc written now, with the same size and second as the agent's version of
      // its source, would be taken for it later.
      const r = await session.bash(`(\nexport PYTHONDONTWRITEBYTECODE=1\n${task.test_cmd}\n)`, options);
      if (r.timedOut) {
        timedOut = true;
        note = "this count did not finish in its own time limit (the graded run below has its own)";
      } else {
        const statuses = parseTestOutput(r.output);
        // A runner that names only failures (unittest without -v, pytest without -rA) names fewer
        // tests once they pass: its count says nothing about the suite's size.
        if ([...statuses.byName.values()].includes("passed")) count = statuses.size;
        else
          note =
            "the output names no passing test (a runner that names only failures), so there is nothing to count";
      }
    }
  } finally {
    const reset = await session.box.sh(RESET, [tree], { timeoutMs: 300_000, signal: options.signal });
    if (reset.exitCode !== 0 && !options.signal.aborted) {
      throw new CommandExitError(
        reset.exitCode,
        reset.stderr.toString("utf8"),
        "putting the tree back after counting the tests",
      );
    }
  }
  return count !== undefined ? { count } : { note, ...(timedOut ? { timedOut } : {}) };
}
