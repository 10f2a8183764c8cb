/** job_status: progress and, when done, the result of an aider_ai_code call run in the background. */
import { z } from "zod";
import { jsonReply } from "../reply-text.js";
import { defineTool } from "../tool.js";
import type { AiderJob } from "./aider-jobs.js";
import { partialAiderResultShape } from "./aider-result-schema.js";
import type { AiderCodeResult } from "./aider-service.js";
import "./aider-services.js";

export const jobStatusTool = defineTool({
  name: "job_status",
  // The aider server's contract: clients parse this reply's text as JSON.
  replyText: jsonReply,
  title: "Status of a background aider job",
  description:
    'Reports a job started by aider_ai_code with background: true: state ("running", "succeeded", "failed", "cancelled"), elapsed_ms, the last lines of aider\'s output, and once finished the same fields aider_ai_code returns ({"success": ..., "diff": ...}, model, tokens, cost). Pass wait_s to wait up to that many seconds for the job to finish before answering (keep it under your client\'s time limit), and cancel: true to stop a running job (the changes it made so far stay and are reported).',
  inputSchema: {
    job_id: z.string().min(1).describe("The job_id aider_ai_code returned."),
    wait_s: z
      .number()
      .int()
      .min(0)
      .max(50)
      .optional()
      .describe("Wait up to this many seconds for the job to finish (default 0)."),
    cancel: z.boolean().optional().describe("Stop the job; the answer then reports its final state."),
  },
  outputSchema: {
    job_id: z.string(),
    state: z.enum(["running", "succeeded", "failed", "cancelled"]),
    started_at: z.string(),
    elapsed_ms: z.number(),
    output_lines: z.number().describe("Lines aider has printed so far."),
    recent_output: z.array(z.string()).describe("aider's last lines of output."),
    error: z.string().optional().describe("Why the job failed before aider produced a result."),
    ...partialAiderResultShape,
  },
  errorReply: (message) => ({ error: message }),
  // cancel: true stops a job; without it the call only reads.
  annotations: { readOnlyHint: false, destructiveHint: false, openWorldHint: false },
  async run(args, ctx) {
    const job = ctx.services.aider.jobs.get(ctx.clientId, args.job_id);
    if (args.cancel) job.cancel();
    const waitMs = (args.wait_s ?? (args.cancel ? 30 : 0)) * 1000;
    await waitForJob(job, waitMs, ctx.signal, (line) => ctx.progress(line));
    return view(job);
  },
});

function view(job: AiderJob<AiderCodeResult>) {
  const base = {
    job_id: job.id,
    state: job.state,
    session_id: job.sessionId,
    started_at: job.startedAt.toISOString(),
    elapsed_ms: job.elapsedMs(),
    output_lines: job.lines,
    recent_output: job.recentOutput(),
  };
  if (job.result) return { ...job.result, ...base };
  if (job.error !== undefined) {
    return { success: false, diff: job.error, message: job.error, error: job.error, ...base };
  }
  return base;
}

/** Resolves when the job finishes, `waitMs` passes or the caller cancels; reports new lines meanwhile. */
async function waitForJob(
  job: AiderJob<unknown>,
  waitMs: number,
  signal: AbortSignal,
  report: (line: string) => void,
): Promise<void> {
  const deadline = Date.now() + waitMs;
  let seen = job.lines;
  while (job.state === "running" && Date.now() < deadline && !signal.aborted) {
    await new Promise((resolve) => setTimeout(resolve, 250));
    if (job.lines > seen) {
      const fresh = job.recentOutput().slice(-(job.lines - seen));
      for (const line of fresh) if (line.trim()) report(line);
      seen = job.lines;
    }
  }
}
