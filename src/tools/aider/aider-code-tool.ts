/** aider_ai_code: the seed's contract, run in the session's box behind the LLM gateway. */
import { z } from "zod";
import "../session-access.js";
import { jsonReply } from "../reply-text.js";
import { defineTool } from "../tool.js";
import { aiderOptionsSchema } from "./aider-options.js";
import { aiderProgress } from "./aider-progress.js";
import { partialAiderResultShape } from "./aider-result-schema.js";
import "./aider-services.js";
import { sessionIdInput } from "../session-id-input.js";

export const aiderCodeTool = defineTool({
  name: "aider_ai_code",
  // The aider server's contract: clients parse this reply's text as JSON.
  replyText: jsonReply,
  title: "Delegate a code change to aider",
  description:
    'Runs aider (an AI pair programmer) non-interactively in the session\'s sandbox to make the change described in ai_coding_prompt, editing only relative_editable_files (paths relative to the repository root; a missing file is created) and reading relative_readonly_files for context. Returns JSON {"success": true, "diff": "<git diff of what this call changed>"} or {"success": false, "diff": "<reason, then any partial diff>"}; bad input (empty prompt or file list, a path outside the repository, an unknown model) is an error whose text is JSON too: {"success": false, "diff": "<what to fix>", "error": "<what to fix>"}. Replies also carry message, model, tokens, cost_usd and duration_ms. Changes stay in the box until session_apply; edits aider makes to other files are undone and listed in reverted_files. The model runs behind a gateway on the host: the box holds no key and has no network. Runs take from about 10 s (offline model) to several minutes; progress notifications stream aider\'s output. If your client gives up on long calls, pass background: true to get a job_id at once and poll job_status. Write a precise prompt: name the functions, the behaviour wanted, and constraints.',
  inputSchema: {
    ai_coding_prompt: z
      .string()
      .min(1, "is empty; say what aider should change")
      .describe("What to change, precisely: files, functions, expected behaviour."),
    relative_editable_files: z
      .array(z.string())
      .min(1, "is empty; name at least one file aider may edit (a new file is created)")
      .describe('Files aider may edit, relative to the repository root (e.g. "src/app.py").'),
    relative_readonly_files: z
      .array(z.string())
      .optional()
      .describe("Files aider reads for context but must not change."),
    model: z
      .string()
      .min(1)
      .optional()
      .describe(
        "aider model name (e.g. gpt-4o, sonnet, gemini/gemini-2.5-pro, openai/drydock-offline); default: the server's.",
      ),
    session_id: sessionIdInput,
    background: z
      .boolean()
      .optional()
      .describe(
        "Return {job_id} at once and run in the background; poll job_status for progress and the result.",
      ),
    aider_options: aiderOptionsSchema.optional().describe("aider settings for this call, over the server's."),
  },
  outputSchema: {
    ...partialAiderResultShape,
    job_id: z.string().optional().describe("With background: true, the job to poll with job_status."),
    state: z.enum(["running"]).optional(),
  },
  // The seed's clients parse every reply as JSON and look at "success" (and "error").
  errorReply: (message) => ({ success: false, diff: message, error: message }),
  // It rewrites files in the box, like file_editor, and reaches a model outside it through the gateway.
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: true },
  async run(args, ctx) {
    const aider = ctx.services.aider;
    const call = aider.prepare({
      prompt: args.ai_coding_prompt,
      editable: args.relative_editable_files,
      readonly: args.relative_readonly_files,
      model: args.model,
      options: args.aider_options,
    });
    const session = await ctx.services.sessions.resolve(ctx.clientId, args.session_id, ctx.signal);
    if (args.background) {
      const job = aider.jobs.start(
        ctx.clientId,
        session.id,
        (job) => aider.run(session, call, { signal: job.signal, onLine: (line) => job.addLine(line) }),
        (result) => result.success,
      );
      return {
        job_id: job.id,
        state: "running" as const,
        session_id: session.id,
        model: call.choice.model,
        message: `aider is running in the background; poll job_status with job_id ${job.id}`,
      };
    }
    const progress = aiderProgress((message) => ctx.progress(message));
    try {
      return await aider.run(session, call, { signal: ctx.signal, onLine: progress.onLine });
    } finally {
      progress.stop();
    }
  },
});
