/**
 * One evaluation task as a task file states it, checked with zod. Field names are snake_case, as
 * in the file; SWE-bench's habit of storing test lists as JSON text is accepted too.
 */
import { PULL_MODES } from "../environment/image-pulls.js";
import { createHash } from "node:crypto";
import { z } from "zod";
import { aiderOptionsSchema } from "../tools/aider/aider-options.js";

/** Ids name folders in the results directory, so they are kept to safe file-name characters. */
export const TASK_ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;

/** A list of test names, or (SWE-bench's FAIL_TO_PASS / PASS_TO_PASS) JSON text holding one. */
const testNames = z.preprocess(
  (value) => {
    if (typeof value !== "string") return value;
    try {
      return JSON.parse(value) as unknown;
    } catch {
      return value;
    }
  },
  z.array(z.string().min(1), { error: "must be a list of test names" }),
);

const command = z.string().trim().min(1, { error: "must be a non-empty shell command" });

export const evalTaskSchema = z.object({
  id: z.string().regex(TASK_ID_PATTERN, {
    error: "must be 1-128 letters, digits, '.', '_' or '-', starting with a letter or digit",
  }),
  repo: z.string().min(1, { error: "must be a host path or a git URL" }),
  ref: z.string().min(1).optional(),
  prompt: z.string().trim().min(1, { error: "must say what the agent should do" }),
  editable_files: z.array(z.string().min(1)).optional(),
  readonly_files: z.array(z.string().min(1)).optional(),
  setup: command.optional(),
  test_cmd: command,
  fail_to_pass: testNames.optional(),
  pass_to_pass: testNames.optional(),
  timeout_s: z.number().int().min(1).max(86_400).optional(),
  /** The agent's own limit, from when it starts (else it shares timeout_s with setup and tests). */
  agent_timeout_s: z.number().int().min(1).max(86_400).optional(),
  /** The tests' own limit, from when they start, so a slow agent cannot eat the tests' time. */
  test_timeout_s: z.number().int().min(1).max(86_400).optional(),
  image: z.string().min(1).optional(),
  /**
   * When the task's `image` is pulled from its registry, over the run's `--pull`: "missing"
   * (the engine lacks it), "always" (again at its first use in the run), "never".
   */
  pull: z.enum(PULL_MODES, { error: 'must be "missing", "always" or "never"' }).optional(),
  /**
   * The box's environment: "repo" (default: the repository's own definition at the task's ref),
   * "none" (the sandbox image as it is), or a definition in environment.yaml's form.
   */
  environment: z
    .union([z.enum(["repo", "none"]), z.record(z.string(), z.unknown())], {
      error: 'must be "repo", "none", or an environment definition ({packages, env, setup, key_files})',
    })
    .optional(),
  /**
   * Where the environment definition is read (default: ref). SWE-bench's environment_setup_commit:
   * tasks of one repository and version share one environment image.
   */
  environment_ref: z.string().min(1).optional(),
  /** The gold patch for the `patch` agent: inline unified diff, or a file beside the task file. */
  patch: z.string().optional(),
  patch_file: z.string().min(1).optional(),
  /** Applied after the agent and before the tests (the tests the agent must not see or edit). */
  test_patch: z.string().optional(),
  test_patch_file: z.string().min(1).optional(),
  /** aider agent: the model and aider settings for this task, over the command line's. */
  model: z.string().min(1).optional(),
  aider_options: aiderOptionsSchema.optional(),
});

export type EvalTaskInput = z.infer<typeof evalTaskSchema>;

/** A task ready to run: paths resolved against the task file, patch files read. */
export interface EvalTask extends EvalTaskInput {
  /** Where the task came from, for messages: "tasks.jsonl:3" or "tasks/foo.yaml". */
  source: string;
  /** A hash of what the task asks for; a finished result of another hash is run again. */
  hash: string;
  /** The task came from a SWE-bench instance row (graded as SWE-bench grades unless told otherwise). */
  swebench_row?: boolean;
}

export const KNOWN_TASK_FIELDS = new Set(Object.keys(evalTaskSchema.shape));

/** A stable hash of a task's content (key order does not matter). */
export function taskHash(task: EvalTaskInput): string {
  const sorted = Object.fromEntries(
    Object.entries(task)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)),
  );
  return createHash("sha256").update(JSON.stringify(sorted)).digest("hex").slice(0, 16);
}

/** The test names the task grades by, or undefined when it grades by test_cmd's exit code. */
export function gradedNames(
  task: Pick<EvalTaskInput, "fail_to_pass" | "pass_to_pass">,
): { failToPass: string[]; passToPass: string[] } | undefined {
  const f2p = task.fail_to_pass ?? [];
  const p2p = task.pass_to_pass ?? [];
  if (f2p.length === 0 && p2p.length === 0) return undefined;
  return { failToPass: f2p, passToPass: p2p };
}
