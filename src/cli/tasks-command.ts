import type { Command } from "commander";
import { NotFoundError } from "../util/errors.js";
import { bigPictureJson, renderBigPictureText } from "../tasks/render-big-picture.js";
import { stackOverview } from "../tasks/stack-overview.js";
import { TaskStackStore, type StoredStackSummary } from "../tasks/task-stack-store.js";
import { textTable } from "./text-table.js";
import { terminalJson, terminalText } from "../util/terminal-text.js";
import { printErr, printOut } from "./terminal-out.js";

interface DirOption {
  dir?: string;
  json?: boolean;
}

/** Adds `drydock tasks show [SESSION]` and `drydock tasks list`: read-only views of stored stacks. */
export function registerTasksCommand(program: Command): void {
  const tasks = program.command("tasks").description("inspect the task stacks kept for sessions");

  tasks
    .command("show")
    .description("print a session's task stack as an outline (default: the most recently saved stack)")
    .argument("[session]", "session id, as listed by `drydock tasks list`")
    .option("--json", "print the stack as JSON")
    .option("--dir <path>", "directory of stored task stacks (default: <state dir>/tasks)")
    .action(async (session: string | undefined, options: DirOption, command: Command) => {
      const store = new TaskStackStore({ dir: options.dir });
      // Errors are thrown, not command.error(): they are no usage mistake, so one line says it all.
      const sessionId = session ?? (await latestSession(store));
      const peeked = await store.peek(sessionId);
      if (!peeked) {
        throw new NotFoundError(
          `session ${sessionId} has no stored task stack in ${store.dir}; list stored stacks with \`drydock tasks list\``,
        );
      }
      if (peeked.warning) writeErr(command, `warning: ${terminalText(peeked.warning)}\n`);
      const { stack } = peeked;
      if (options.json) {
        const json = {
          session_id: sessionId,
          saved_at: peeked.savedAt,
          zen: stack.isZen,
          current_task_id: stack.currentTaskId,
          tasks: bigPictureJson(stack),
        };
        writeOut(command, terminalJson(json, 2) + "\n");
        return;
      }
      const { counts } = stackOverview(stack);
      // Titles and bodies are the agent's words: shown with their control characters escaped.
      writeOut(
        command,
        terminalText(
          `session ${sessionId}: ${counts.total} tasks, ${counts.open} open, saved ${peeked.savedAt}\n\n` +
            renderBigPictureText(stack) +
            "\n",
        ),
      );
    });

  tasks
    .command("list")
    .description("list the sessions that have a stored task stack")
    .option("--json", "print the list as JSON")
    .option("--dir <path>", "directory of stored task stacks (default: <state dir>/tasks)")
    .action(async (options: DirOption, command: Command) => {
      const store = new TaskStackStore({ dir: options.dir });
      const summaries = await store.list();
      if (options.json) {
        writeOut(command, terminalJson(summaries.map(summaryJson), 2) + "\n");
        return;
      }
      if (summaries.length === 0) {
        writeOut(command, `no task stacks stored in ${store.dir}\n`);
        return;
      }
      writeOut(command, formatTable(summaries));
    });
}

async function latestSession(store: TaskStackStore): Promise<string> {
  const readable = (await store.list()).filter((s) => s.savedAt !== undefined);
  const latest = readable.sort((a, b) => (a.savedAt ?? "").localeCompare(b.savedAt ?? "")).at(-1);
  if (!latest) {
    throw new NotFoundError(
      `no task stacks stored in ${store.dir}; they appear once an agent creates a task`,
    );
  }
  return latest.sessionId;
}

function summaryJson(summary: StoredStackSummary) {
  return {
    session_id: summary.sessionId,
    saved_at: summary.savedAt ?? null,
    tasks: summary.tasks ?? null,
    open: summary.open ?? null,
    current_task_title: summary.currentTitle ?? null,
    problem: summary.problem ?? null,
  };
}

function formatTable(summaries: readonly StoredStackSummary[]): string {
  return textTable([
    ["SESSION", "TASKS", "OPEN", "SAVED", "CURRENT"],
    ...summaries.map((s) => [
      s.sessionId,
      String(s.tasks ?? "-"),
      String(s.open ?? "-"),
      s.savedAt ?? "-",
      s.problem ? `(damaged: ${s.problem})` : (s.currentTitle ?? "(zen)"),
    ]),
  ]);
}

function writeOut(command: Command, text: string): void {
  const write = command.configureOutput().writeOut ?? printOut;
  write(text);
}

function writeErr(command: Command, text: string): void {
  const write = command.configureOutput().writeErr ?? printErr;
  write(text);
}
