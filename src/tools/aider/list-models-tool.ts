/** list_models: aider's own model list, filtered, as in the seed. */
import { z } from "zod";
import "../session-access.js";
import { jsonReply } from "../reply-text.js";
import { defineTool } from "../tool.js";
import "./aider-services.js";
import { filterModels } from "./model-catalog.js";

export const listModelsTool = defineTool({
  name: "list_models",
  // The aider server's contract: clients parse this reply's text as JSON.
  replyText: jsonReply,
  title: "List the models aider knows",
  description:
    "Lists the chat model names aider knows (its own list, as `aider --list-models` searches it), filtered by a case-insensitive substring. Returns {\"models\": [...]}. Use it to find a name for aider_ai_code's model; a model also needs its provider's key on the host (or use openai/drydock-offline, the offline model). The first call reads the list in the box (a few seconds); later calls are cached.",
  inputSchema: {
    substring: z
      .string()
      .optional()
      .describe('Part of a model name, e.g. "sonnet" or "gpt-4o"; empty lists all.'),
    session_id: z
      .string()
      .min(1)
      .optional()
      .describe("Session whose box to read the list in; omit for your default session."),
  },
  outputSchema: { models: z.array(z.string()) },
  // The seed's clients parse every reply as JSON and look for "error".
  errorReply: (message) => ({ error: message }),
  annotations: { readOnlyHint: true, openWorldHint: false },
  async run(args, ctx) {
    const session = await ctx.services.sessions.resolve(ctx.clientId, args.session_id, ctx.signal);
    const models = await ctx.services.aider.catalog.models(session.box, ctx.signal);
    return { models: filterModels(models, args.substring) };
  },
});
