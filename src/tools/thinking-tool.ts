/**
 * sequential_thinking: a place to write down reasoning step by step, with revisions and branches.
 * The history lives on the host beside the session; nothing runs in the box.
 */
import { z } from "zod";
import type { Session } from "../session/session.js";
import { parseArgs } from "./parse-args.js";
import { SequentialThinking } from "./thinking/sequential-thinking.js";
import { defineTool } from "./tool.js";

const histories = new WeakMap<Session, SequentialThinking>();

function historyOf(session: Session): SequentialThinking {
  let history = histories.get(session);
  if (history === undefined) {
    history = new SequentialThinking();
    histories.set(session, history);
  }
  return history;
}

const thinkingInput = {
  thought: z.string().describe("The current reasoning step: an analysis, a hypothesis, a plan, a check."),
  thought_number: z.number().int().describe("This thought's number in the sequence, from 1."),
  total_thoughts: z
    .number()
    .int()
    .describe("How many thoughts you now expect in all; raise or lower it as you go."),
  next_thought_needed: z
    .boolean()
    .optional()
    .describe(
      "True if more thinking follows; false when this is the last. Default: true while thought_number is below total_thoughts (or needs_more_thoughts is true), else false.",
    ),
  is_revision: z.boolean().optional().describe("True when this thought reconsiders an earlier one."),
  revises_thought: z
    .number()
    .int()
    .optional()
    .describe("With is_revision: the number of the thought revised."),
  branch_from_thought: z
    .number()
    .int()
    .optional()
    .describe("Starts a branch from this earlier thought (with branch_id)."),
  branch_id: z.string().optional().describe("Names the branch this thought belongs to."),
  needs_more_thoughts: z
    .boolean()
    .optional()
    .describe("True when you reached the planned end but need more thoughts."),
  session_id: z.string().optional().describe("Session whose history to use; omit for your default session."),
};

export const sequentialThinkingTool = defineTool({
  name: "sequential_thinking",
  title: "Think step by step",
  description: [
    "Records one step of structured reasoning so a hard problem can be worked through in order, with room to revise earlier steps or branch into alternatives.",
    "Use it before a tricky change: to break a problem down, weigh approaches, or check a hypothesis. It changes nothing in the workspace.",
    "Call it once per thought, numbering from 1; next_thought_needed says whether more follow (by default, until thought_number reaches total_thoughts). Revisions need revises_thought; a branch needs branch_from_thought and branch_id.",
    "Returns the thought's number, the running total, whether more is needed, the branch names and how many thoughts the session has recorded.",
    "History is kept per session (the last 1,000 thoughts, 50,000 characters each).",
  ].join(" "),
  inputSchema: thinkingInput,
  outputSchema: {
    thoughtNumber: z.number().int(),
    totalThoughts: z.number().int(),
    nextThoughtNeeded: z.boolean(),
    branches: z.array(z.string()),
    thoughtHistoryLength: z.number().int(),
    message: z.string(),
  },
  annotations: { readOnlyHint: true, idempotentHint: false, openWorldHint: false },
  async run(input, ctx) {
    const { session_id, ...thought } = parseArgs(thinkingInput, input, "sequential_thinking");
    const session = await ctx.services.sessions.resolve(ctx.clientId, session_id, ctx.signal);
    const summary = historyOf(session).record(thought);
    const next = summary.nextThoughtNeeded
      ? `continue with thought ${summary.thoughtNumber + 1}`
      : "thinking is complete; act on it";
    return {
      ...summary,
      branches: [...summary.branches],
      message: `Recorded thought ${summary.thoughtNumber} of ${summary.totalThoughts}; ${next}.`,
    };
  },
});
