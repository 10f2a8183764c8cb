/**
 * Serves ToolDefinitions on an MCP server: `tools/list` and `tools/call`. This is the one place
 * where arguments are checked (unknown ones refused), where a tool's result becomes `content`
 * (text written for the model, reply-text.ts) plus `structuredContent` (the object, for
 * programs; fields only the text shows left out, and the text left out for a client that reads
 * only the object), and where any thrown error
 * becomes an `isError` result with a message that says what to do next.
 */
import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { CallToolRequestSchema, ListToolsRequestSchema, type Tool } from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";
import { parseArgs, strictInput } from "../tools/parse-args.js";
import { readableReply } from "../tools/reply-text.js";
import type { AnyToolDefinition, ToolContext, ToolServices } from "../tools/tool.js";
import { describeError } from "../util/errors.js";
import { ERROR_META_KEY, errorMeta } from "../util/tool-error-meta.js";
import { readsStructuredOnly } from "../util/reply-meta.js";
import { logger } from "../util/log.js";
import { withProgress } from "../util/progress-scope.js";
import { ToolCallAudit } from "./tool-audit.js";

const log = logger("server");

export type Redact = (text: string) => string;

/**
 * Registers `tools` on `server` (before it connects). The tool list never changes while the
 * server runs, so `listChanged` is not advertised.
 */
export function registerTools(
  server: McpServer,
  tools: AnyToolDefinition[],
  clientId: string,
  services: ToolServices,
  redact: Redact = (t) => t,
  listingOptions: ListingOptions = {},
): void {
  const byName = new Map(tools.map((tool) => [tool.name, tool]));
  const listing = { tools: tools.map((tool) => listedTool(tool, listingOptions)) };
  server.server.registerCapabilities({ tools: {} });
  server.server.setRequestHandler(ListToolsRequestSchema, () => listing);
  server.server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
    const name = request.params.name;
    const tool = byName.get(name);
    if (tool === undefined) {
      return errorResult(
        `no tool named ${JSON.stringify(name)} on this server; tools/list names the ${tools.length} it serves (the operator picks them with \`drydock serve --tools\`)`,
      );
    }
    const token = extra._meta?.progressToken;
    let step = 0;
    // Every call that reaches a session leaves a line in that session's audit log.
    const audit = new ToolCallAudit(tool.name, clientId, services, request.params.arguments);
    const ctx: ToolContext = {
      clientId,
      signal: extra.signal,
      services: audit.services,
      output: (line) => audit.output(redact(line)),
      progress: (message, progress, total) => {
        if (token === undefined) return;
        step++;
        void extra
          .sendNotification({
            method: "notifications/progress",
            params: { progressToken: token, progress: progress ?? step, total, message: redact(message) },
          })
          .catch(() => undefined);
      },
    };
    const started = Date.now();
    try {
      const args = parseArgs(tool.inputSchema, request.params.arguments, tool.name);
      const result = await withProgress(
        (m) => ctx.progress(m),
        () => tool.run(args, ctx),
      );
      const redacted = redactValue(result, redact) as Record<string, unknown>;
      const checked = resultObject(tool).safeParse(redacted);
      if (!checked.success) {
        throw new Error(
          `${tool.name} produced a reply that does not match its output schema (${checked.error.message}); this is a drydock bug`,
        );
      }
      log.debug(`${tool.name} ok in ${Date.now() - started} ms`);
      audit.finish({ reply: redacted });
      const structuredContent = withoutFields(redacted, Object.keys(tool.textOnlySchema ?? {}));
      // A client that reads only structuredContent gets no text: what the reply says crosses once.
      if (readsStructuredOnly(request.params._meta)) return { content: [], structuredContent };
      // The text is made from the redacted result, so it can hold nothing the result does not.
      const text = (tool.replyText ?? readableReply)(redacted);
      return { content: [{ type: "text" as const, text }], structuredContent };
    } catch (error) {
      const message = redact(describeError(error));
      log.debug(`${tool.name} failed in ${Date.now() - started} ms: ${message}`);
      audit.finish({ error: message });
      if (tool.errorReply === undefined) return errorResult(message, error);
      return errorResult(JSON.stringify(tool.errorReply(message)), error);
    }
  });
}

/** An error reply; one of our own errors also carries its code and class in `_meta` (tool-error-meta.ts). */
function errorResult(text: string, error?: unknown) {
  const meta = errorMeta(error);
  return {
    isError: true,
    content: [{ type: "text" as const, text }],
    ...(meta === undefined ? {} : { _meta: { [ERROR_META_KEY]: meta } }),
  };
}

/** What `tools/list` shows besides each tool's name, description, input schema and annotations. */
export interface ListingOptions {
  /**
   * List each tool's `outputSchema` (`drydock serve --output-schemas`). Default false: the list goes
   * into a model's context on every request and the output schemas were 40 % of it, while a model
   * reads the reply itself. Replies carry `structuredContent` either way, checked against the
   * schema on the server before they leave.
   */
  outputSchemas?: boolean;
}

const listed = new WeakMap<AnyToolDefinition, Tool>();

/** A tool as tools/list shows it, built once per definition. */
export function listedTool(tool: AnyToolDefinition, options: ListingOptions = {}): Tool {
  let entry = listed.get(tool);
  if (entry === undefined) {
    entry = {
      name: tool.name,
      title: tool.title,
      description: tool.description,
      inputSchema: jsonSchema(strictInput(tool.inputSchema), "input") as Tool["inputSchema"],
      ...(tool.annotations ? { annotations: tool.annotations } : {}),
    };
    listed.set(tool, entry);
  }
  if (options.outputSchemas !== true) return entry;
  return { ...entry, outputSchema: jsonSchema(outputObject(tool), "output") as Tool["outputSchema"] };
}

/**
 * A copy of a tool's result as JSON would carry it, every string (keys too) passed through
 * `redact`. Each string is redacted on its own rather than the JSON text as a whole: a secret
 * with a character JSON escapes (a quote, a backslash) is found all the same, and a megabyte of
 * output is not serialized and parsed once more only to be redacted.
 */
export function redactValue(value: unknown, redact: Redact): unknown {
  if (typeof value === "string") return redact(value);
  if (value === null || typeof value !== "object") return value;
  const json = (value as { toJSON?: unknown }).toJSON;
  if (typeof json === "function") return redactValue((json as () => unknown).call(value), redact);
  if (Array.isArray(value))
    return value.map((item: unknown) => (item === undefined ? null : redactValue(item, redact)));
  // fromEntries defines own properties: a key "__proto__" (from a JSON file in the box) stays a key.
  return Object.fromEntries(
    Object.entries(value)
      .filter(([, item]) => item !== undefined && typeof item !== "function")
      .map(([key, item]) => [redact(key), redactValue(item, redact)]),
  );
}

function withoutFields(result: Record<string, unknown>, fields: readonly string[]): Record<string, unknown> {
  if (fields.length === 0) return result;
  const out = { ...result };
  for (const field of fields) delete out[field];
  return out;
}

const outputs = new WeakMap<AnyToolDefinition, z.ZodObject>();
const results = new WeakMap<AnyToolDefinition, z.ZodObject>();

/** The whole result a tool's run returns: its output schema and its text-only fields. */
function resultObject(tool: AnyToolDefinition): z.ZodObject {
  let object = results.get(tool);
  if (object === undefined) {
    object = z.object({ ...tool.outputSchema, ...(tool.textOnlySchema ?? {}) });
    results.set(tool, object);
  }
  return object;
}

function outputObject(tool: AnyToolDefinition): z.ZodObject {
  let object = outputs.get(tool);
  if (object === undefined) {
    object = z.object(tool.outputSchema);
    outputs.set(tool, object);
  }
  return object;
}

/**
 * JSON Schema (draft 7, as the SDK writes it) without what every client already assumes: the
 * `$schema` line and the bounds zod puts on every integer (±2^53-1). tools/list goes into the
 * model's context on every request, so each byte there costs.
 */
function jsonSchema(object: z.ZodObject, io: "input" | "output"): Record<string, unknown> {
  const schema = z.toJSONSchema(object, { target: "draft-7", io }) as Record<string, unknown>;
  delete schema.$schema;
  return JSON.parse(JSON.stringify(schema), (key, value: unknown) => {
    if (key === "minimum" && value === Number.MIN_SAFE_INTEGER) return undefined;
    if (key === "maximum" && value === Number.MAX_SAFE_INTEGER) return undefined;
    return value;
  }) as Record<string, unknown>;
}
