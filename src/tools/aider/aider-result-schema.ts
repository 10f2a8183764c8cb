/** The JSON an aider call answers with, shared by aider_ai_code and job_status. */
import { z } from "zod";

/** The seed's two keys first (`success`, `diff`), then what drydock adds. */
export const aiderResultShape = {
  success: z.boolean().describe("True when aider finished and changed the editable files."),
  diff: z
    .string()
    .describe("git diff of what this call changed; on failure the reason, then any partial diff."),
  message: z.string().describe("What happened, in a sentence or a paragraph of aider's own words."),
  model: z.string().describe("The model aider used."),
  session_id: z.string(),
  duration_ms: z.number(),
  tokens: z.object({ input: z.number(), output: z.number() }).describe("Model tokens this call used."),
  cost_usd: z.number().describe("Cost of this call's model requests (0 for the offline model)."),
  llm_requests: z.number().describe("Model requests this call made through the gateway."),
  reverted_files: z
    .array(z.string())
    .describe("Files aider changed although they were not editable; those changes were undone."),
  timings_ms: z.object({ setup: z.number(), aider: z.number(), diff: z.number() }),
};

/** Every field optional, for replies that may come before the result (background jobs). */
export const partialAiderResultShape = {
  success: aiderResultShape.success.optional(),
  diff: aiderResultShape.diff.optional(),
  message: aiderResultShape.message.optional(),
  model: aiderResultShape.model.optional(),
  session_id: aiderResultShape.session_id.optional(),
  duration_ms: aiderResultShape.duration_ms.optional(),
  tokens: aiderResultShape.tokens.optional(),
  cost_usd: aiderResultShape.cost_usd.optional(),
  llm_requests: aiderResultShape.llm_requests.optional(),
  reverted_files: aiderResultShape.reverted_files.optional(),
  timings_ms: aiderResultShape.timings_ms.optional(),
};
