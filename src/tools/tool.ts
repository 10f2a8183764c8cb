import type { z } from "zod";

/**
 * What a tool may ask of the server that runs it. The server builds one per call; tests can build
 * their own. Tools never see the transport, the engine or another client's sessions.
 */
export interface ToolContext {
  /** The calling client; sessions and task stacks are scoped to it. */
  readonly clientId: string;
  /** Aborted when the client cancels the request or goes away. */
  readonly signal: AbortSignal;
  /** Reports progress; a no-op when the client did not ask for progress. */
  progress(message: string, progress?: number, total?: number): void;
  /**
   * Takes each whole line a command prints as it runs, cleaned of terminal sequences, all of them
   * (progress reports only the first ones): the live view shows the last of them while it runs.
   */
  output?(line: string): void;
  /** Services the tools share; each tool family declares what it needs from here. */
  readonly services: ToolServices;
}

/**
 * Filled in by the server. Kept as an open interface so each tool family adds the service it
 * needs by declaration merging in its own file, without this file knowing every family.
 */
// eslint-disable-next-line @typescript-eslint/no-empty-object-type
export interface ToolServices {}

/** An MCP tool as plain data plus one async function; `server/` registers these. */
export interface ToolDefinition<
  In extends z.ZodRawShape = z.ZodRawShape,
  Out extends z.ZodRawShape = z.ZodRawShape,
  // eslint-disable-next-line @typescript-eslint/no-empty-object-type
  Text extends z.ZodRawShape = {},
> {
  /** snake_case, stable: clients depend on it. */
  readonly name: string;
  readonly title: string;
  /** Written for a model: what it does, when to use it, what it returns, its limits. */
  readonly description: string;
  readonly inputSchema: In;
  readonly outputSchema: Out;
  /**
   * Fields of the result that only the reply's text shows: left out of `structuredContent` and of
   * the listed output schema, so what they hold crosses the wire once. The bash tool's merged
   * output is one: the object already has it as stdout and stderr apart.
   */
  readonly textOnlySchema?: Text;
  readonly annotations?: {
    readOnlyHint?: boolean;
    destructiveHint?: boolean;
    idempotentHint?: boolean;
    openWorldHint?: boolean;
  };
  /**
   * The JSON an error answers with, for tools whose clients parse every reply (the aider seed's
   * `{"success": false, ...}`); without it an error is plain text. Either way the reply is isError.
   */
  readonly errorReply?: (message: string) => Record<string, unknown>;
  /**
   * The reply's `content` text, written for the model (reply-text.ts); default: the result's facts
   * as `key: value` lines, made from the whole result (text-only fields included).
   */
  readonly replyText?: (result: ToolResult<Out, NoInfer<Text>>) => string;
  /** Throws a DrydockError (or any error) on failure; the server turns it into an isError result. */
  run(args: z.infer<z.ZodObject<In>>, ctx: ToolContext): Promise<ToolResult<Out, NoInfer<Text>>>;
}

/** What a tool's run returns: its output schema's object, plus its text-only fields if it has any. */
export type ToolResult<Out extends z.ZodRawShape, Text extends z.ZodRawShape> = [keyof Text] extends [never]
  ? z.infer<z.ZodObject<Out>>
  : z.infer<z.ZodObject<Out & Text>>;

/** Lets a list hold tools of different shapes. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type AnyToolDefinition = ToolDefinition<any, any, any>;

/** Identity helper that keeps the argument types of `run` inferred from the schemas. */
export function defineTool<
  In extends z.ZodRawShape,
  Out extends z.ZodRawShape,
  // eslint-disable-next-line @typescript-eslint/no-empty-object-type
  Text extends z.ZodRawShape = {},
>(tool: ToolDefinition<In, Out, Text>): ToolDefinition<In, Out, Text> {
  return tool;
}
