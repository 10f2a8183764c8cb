/**
 * A session's task stack in brief, for people watching a session (`drydock sessions show` and the
 * live page): counts, the current task, the outline and the tree. Never throws: a stack that
 * cannot be read is a problem to show beside the rest.
 */
import { describeError } from "../util/errors.js";
import { bigPictureJson, renderBigPictureText, type BigPictureNode } from "./render-big-picture.js";
import { stackOverview } from "./stack-overview.js";
import type { TaskStackStore } from "./task-stack-store.js";

export interface TaskStackFacts {
  tasks: number;
  open: number;
  current: string | null;
  outline: string;
  tree: BigPictureNode[];
}

export async function taskStackFacts(
  store: TaskStackStore,
  sessionId: string,
): Promise<{ task_stack: TaskStackFacts | null; task_stack_problem?: string }> {
  try {
    const peeked = await store.peek(sessionId);
    if (!peeked) return { task_stack: null };
    const { counts } = stackOverview(peeked.stack);
    return {
      task_stack: {
        tasks: counts.total,
        open: counts.open,
        current: peeked.stack.currentTask()?.title ?? null,
        outline: renderBigPictureText(peeked.stack),
        tree: bigPictureJson(peeked.stack),
      },
      ...(peeked.warning ? { task_stack_problem: peeked.warning } : {}),
    };
  } catch (error) {
    return { task_stack: null, task_stack_problem: describeError(error) };
  }
}
