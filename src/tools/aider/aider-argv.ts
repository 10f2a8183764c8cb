/**
 * aider's command line for one non-interactive run in the box. Pure: the same input gives the
 * same argv, so the flags that keep aider quiet, offline and confined are tested without Docker.
 */
import type { AiderOptions } from "./aider-options.js";

export interface AiderArgvInput {
  /** The `--model` value (see chooseAiderModel). */
  model: string;
  prompt: string;
  /** Paths relative to /workspace that aider may edit. */
  editable: readonly string[];
  /** Paths relative to /workspace that aider reads but must not edit. */
  readonly: readonly string[];
  options: AiderOptions;
  /** A writable directory outside the repository for aider's history files (default /tmp/drydock-aider). */
  runDir?: string;
  /** Names this run's history files. */
  runId: string;
}

/**
 * Flags every run gets: answer every question yes and never wait for a terminal, print plain text,
 * contact nothing but the model, leave git history, .gitignore and commits alone (the tool takes
 * its own diff), and keep aider's files out of the repository.
 */
export const FIXED_AIDER_FLAGS: readonly string[] = [
  "--yes-always",
  "--no-pretty",
  "--no-fancy-input",
  "--no-check-update",
  "--no-show-release-notes",
  "--no-analytics",
  "--no-show-model-warnings",
  "--no-gui",
  "--no-notifications",
  "--no-detect-urls",
  "--disable-playwright",
  "--no-suggest-shell-commands",
  "--no-auto-commits",
  "--no-dirty-commits",
  "--no-gitignore",
  "--no-restore-chat-history",
  "--encoding=utf-8",
];

/**
 * The argv (starting with `aider`). Values are attached with `=` so that a prompt or path starting
 * with `-` is never read as a flag.
 */
export function buildAiderArgv(input: AiderArgvInput): string[] {
  const runDir = input.runDir ?? "/tmp/drydock-aider";
  const { options } = input;
  const argv = ["aider", `--model=${input.model}`, ...FIXED_AIDER_FLAGS];
  argv.push(`--chat-history-file=${runDir}/${input.runId}.chat.md`);
  argv.push(`--input-history-file=${runDir}/${input.runId}.input.history`);
  if (options.edit_format !== undefined) argv.push(`--edit-format=${options.edit_format}`);
  if (options.map_tokens !== undefined) argv.push(`--map-tokens=${options.map_tokens}`);
  if (options.lint_cmd !== undefined) argv.push(`--lint-cmd=${options.lint_cmd}`);
  if (options.auto_lint !== undefined) argv.push(options.auto_lint ? "--auto-lint" : "--no-auto-lint");
  if (options.test_cmd !== undefined) argv.push(`--test-cmd=${options.test_cmd}`);
  if (options.auto_test !== undefined) argv.push(options.auto_test ? "--auto-test" : "--no-auto-test");
  for (const path of input.editable) argv.push(`--file=${path}`);
  for (const path of input.readonly) argv.push(`--read=${path}`);
  argv.push(`--message=${input.prompt}`);
  return argv;
}
