/** The persistent shell as a tool, and task_done. */
import { z } from "zod";
import { ProgressLines } from "./progress-lines.js";
import "./session-access.js";
import { bashReplyText } from "./bash-reply-text.js";
import { InvalidArgumentError } from "../util/errors.js";
import { defineTool, type AnyToolDefinition } from "./tool.js";
import { sessionIdInput } from "./session-id-input.js";

export const bashTool = defineTool({
  name: "bash",
  title: "Run a command in the box",
  description:
    "Runs a command in the session's persistent bash shell in the box (cwd starts at /workspace, the repository; cd, variables and functions persist). The reply reads like a terminal: stdout and stderr merged in arrival order (2>&1 for exact interleaving), then a line such as [exit code 0]; the structured form has stdout and stderr apart. stdin is empty. Each stream is capped, head and tail kept; max_output_bytes asks for more. A command past its time limit, or cancelled, is stopped with all it started, background jobs included: exit_code is null and a new shell starts with the cwd, variables and functions from before (restarted: true, note says what happened); likewise for a command that ends the shell (exit, exec). Start a server that must outlive a stop with `(setsid cmd > log 2>&1 &)`. No network unless the session has one. restart: true gives a fresh shell.",
  inputSchema: {
    command: z.string().describe("The command; may span several lines."),
    restart: z.boolean().optional().describe("Start a fresh shell first (alone, with an empty command)."),
    timeout_s: z
      .number()
      .int()
      .min(1)
      .max(86_400)
      .optional()
      .describe("Time limit in seconds (default: the session's)."),
    max_output_bytes: z
      .number()
      .int()
      .min(1_000)
      .optional()
      .describe(
        "Bytes of each stream to keep, head and tail (default: the session's, 30,000; at most the server's --max-output-bytes, 4 MiB).",
      ),
    session_id: sessionIdInput,
  },
  outputSchema: {
    stdout: z.string(),
    stderr: z.string(),
    exit_code: z.number().nullable().describe("null when the command was stopped (timed out or cancelled)."),
    timed_out: z.boolean(),
    truncated: z.boolean(),
    restarted: z.boolean().describe("A new shell was started during this call; note says what state it has."),
    note: z.string().optional(),
  },
  // The text shows both streams merged in arrival order, as a terminal would; the object has them
  // apart. Neither repeats the other's copy, so the output crosses the wire once for each reader.
  textOnlySchema: {
    output: z.string().describe("stdout and stderr merged, in arrival order."),
  },
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: false },
  replyText: bashReplyText,
  async run(args, ctx) {
    const session = await ctx.services.sessions.resolve(ctx.clientId, args.session_id, ctx.signal);
    if (args.max_output_bytes !== undefined && args.max_output_bytes > session.outputLimitBytes) {
      throw new InvalidArgumentError(
        "max_output_bytes",
        `${args.max_output_bytes} is over this server's limit of ${session.outputLimitBytes} bytes per stream; ask for at most that, or write the output to a file and read it in parts (file_editor view with view_range); the operator raises the limit with drydock serve --max-output-bytes`,
      );
    }
    if (args.restart) {
      await session.restartShell(ctx.signal);
      if (args.command.trim() === "") {
        return {
          stdout: "",
          stderr: "",
          output: "",
          exit_code: 0,
          timed_out: false,
          truncated: false,
          restarted: true,
          note: "a fresh shell was started",
        };
      }
    }
    // One line splitter per stream, so lines of the two are never spliced together.
    let lines = 0;
    const progressLines = { stdout: new ProgressLines(), stderr: new ProgressLines() };
    const report = (done: string[]) => {
      for (const line of done) {
        ctx.output?.(line);
        if (lines++ < 1000) ctx.progress(line);
      }
    };
    const result = await session.bash(args.command, {
      timeoutMs: args.timeout_s === undefined ? undefined : args.timeout_s * 1000,
      maxOutputBytes: args.max_output_bytes,
      signal: ctx.signal,
      onOutput: (text, stream) => report(progressLines[stream].push(text)),
    });
    report(progressLines.stdout.flush());
    report(progressLines.stderr.flush());
    return {
      stdout: result.stdout,
      stderr: result.stderr,
      output: result.output,
      exit_code: result.exitCode,
      timed_out: result.timedOut,
      truncated: result.truncated,
      restarted: result.restarted || Boolean(args.restart),
      note: result.note,
    };
  },
});

export const taskDoneTool = defineTool({
  name: "task_done",
  title: "Mark the work finished",
  description:
    "Call when the whole task is finished. Records an optional summary and returns the diffstat of everything changed in the box, so the caller can review and apply it (session_diff, session_apply).",
  inputSchema: {
    summary: z.string().max(20_000).optional().describe("What was done, for the caller."),
    session_id: sessionIdInput,
  },
  outputSchema: {
    message: z.string(),
    session_id: z.string(),
    summary: z.string().optional(),
    stat: z.string(),
  },
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  async run(args, ctx) {
    const session = await ctx.services.sessions.resolve(ctx.clientId, args.session_id, ctx.signal);
    session.markDone(args.summary);
    const stat = await session.diffStat(ctx.signal);
    return {
      message: "Task done.",
      session_id: session.id,
      summary: args.summary,
      stat: stat || "no changes",
    };
  },
});

export const shellTools: AnyToolDefinition[] = [bashTool, taskDoneTool];
