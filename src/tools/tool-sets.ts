/**
 * The tool sets an operator picks with `drydock serve --tools`: every tool's name and description
 * goes into the model's context on each request, so a server that lists only what its agent uses
 * leaves the model more room for the work.
 */
import { aiderTools } from "./aider/aider-tools.js";
import { shellTools } from "./bash-tool.js";
import { checkpointTools } from "./checkpoint-tools.js";
import { sessionTools } from "./session-tools.js";
import { taskStackTools } from "./task-stack-tools.js";
import type { AnyToolDefinition } from "./tool.js";
import { InvalidArgumentError } from "../util/errors.js";

const names = (tools: readonly AnyToolDefinition[]) => tools.map((t) => t.name);

/** Each set's tool names; `all` is every tool the server has. */
export const TOOL_SETS: Readonly<Record<string, readonly string[]>> = {
  // What a coding agent works with, in about 20 KB: a box, a shell, one editor, search, the diff,
  // the change taken out, and the signal that the work is done. The rest is a --tools away.
  core: [
    "session_create",
    "session_destroy",
    "session_diff",
    "session_apply",
    "bash",
    "file_editor",
    "code_search",
    "git_diff",
    "task_done",
  ],
  // Resuming a kept session is for servers started with --keep-sessions: not part of the minimum.
  minimal: [...names(sessionTools).filter((n) => n !== "session_resume"), "bash", "file_editor", "git_diff"],
  // Checkpoints and forks are for agents that explore: a --tools away, not in every context.
  sessions: [...names(sessionTools), ...names(checkpointTools)],
  checkpoints: names(checkpointTools),
  shell: names(shellTools),
  edit: ["file_editor", "str_replace_based_edit_tool", "json_editor", "code_search", "git_diff"],
  thinking: ["sequential_thinking"],
  aider: names(aiderTools),
  tasks: names(taskStackTools),
  all: [],
};

/** What `drydock serve` lists when `--tools` is not given. */
export const DEFAULT_TOOL_SETS = ["core"];

/**
 * The default for a server: `core`, plus `session_resume` on one that keeps sessions
 * (`--keep-sessions`), the only kind whose sessions can be resumed.
 */
export function defaultToolSets(keepSessions = false): string[] {
  return keepSessions ? [...DEFAULT_TOOL_SETS, "session_resume"] : [...DEFAULT_TOOL_SETS];
}

/**
 * The tools of `available` that the sets (or single tool names) in `picked` name, in the order of
 * `available`. Throws InvalidArgumentError naming `field` for a name that is neither.
 */
export function pickTools(
  available: readonly AnyToolDefinition[],
  picked: readonly string[] = DEFAULT_TOOL_SETS,
  field = "--tools",
): AnyToolDefinition[] {
  const known = new Set(available.map((t) => t.name));
  const wanted = new Set<string>();
  if (picked.length === 0) {
    throw new InvalidArgumentError(field, `names no tool set; pick from ${setList()}`);
  }
  for (const name of picked) {
    if (name === "all") return [...available];
    const set = Object.hasOwn(TOOL_SETS, name) ? TOOL_SETS[name] : undefined;
    if (set !== undefined) for (const tool of set) wanted.add(tool);
    else if (known.has(name)) wanted.add(name);
    else {
      throw new InvalidArgumentError(
        field,
        `${JSON.stringify(name)} is neither a tool set nor a tool of this server; sets are ${setList()}, and single tools may be named too (e.g. minimal,json_editor)`,
      );
    }
  }
  return available.filter((t) => wanted.has(t.name));
}

/** `--tools minimal,tasks` as a list of names; blanks between commas are ignored. */
export function parseToolSets(value: string): string[] {
  return value
    .split(",")
    .map((s) => s.trim())
    .filter((s) => s !== "");
}

function setList(): string {
  return Object.keys(TOOL_SETS).join(", ");
}

/** The `--tools` flag's value, checked against the server's tools; throws naming the flag. */
export function toolSetsFlag(value: string, available: readonly AnyToolDefinition[]): string[] {
  const sets = parseToolSets(value);
  pickTools(available, sets);
  return sets;
}
