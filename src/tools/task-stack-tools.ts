import { createNewTask, extendCurrentTask } from "./task-stack/creation-tools.js";
import { completeCurrentTask, removeTask, switchFocus, updateCurrentTask } from "./task-stack/focus-tools.js";
import {
  getBigPicture,
  getCompletedTasks,
  getCurrentTask,
  getStackOverview,
  listSiblings,
  peekContext,
} from "./task-stack/view-tools.js";
import type { AnyToolDefinition } from "./tool.js";

/** The twelve task-stack tools, in the order a model meets them. */
export const taskStackTools: AnyToolDefinition[] = [
  createNewTask,
  extendCurrentTask,
  getCurrentTask,
  getBigPicture,
  completeCurrentTask,
  getCompletedTasks,
  updateCurrentTask,
  getStackOverview,
  peekContext,
  listSiblings,
  switchFocus,
  removeTask,
];
