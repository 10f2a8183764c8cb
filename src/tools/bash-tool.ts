/** The persistent shell as a tool, and task_done. */
import { z } from "zod";
import { ProgressLines } from "./progress-lines.js";
import "./session-access.js";
import { defineTool, type AnyToolDefinition } from "./tool.js";

export const bashTool = defineTool({
  name: "bash",
  title: "Run a command in the box",
  description:
    "Runs a bash command in the session's persistent shell inside the sandbox (cwd starts at /workspace, the repository; cd and export persist between calls). stdout and stderr are merged; stdin is empty, so interactive programs get end-of-file. Returns output (ANSI codes removed; head and tail kept when over the cap), exit_code, timed_out, truncated and restarted. A command past its time limit is interrupted; if the shell does not recover it is restarted (cwd and environment reset) and restarted is true. The box has no network unless the session was created with one. Use restart: true to get a fresh shell.",
  inputSchema: {
    command: z.string().describe("The command; may span several lines."),
    restart: z
      .boolean()
      .optional()
      .describe("Start a fresh shell before running the command (or alone, with an empty command)."),
    timeout_s: z
      .number()
      .int()
      .min(1)
      .max(86_400)
      .optional()
      .describe("Time limit in seconds (default: the session's, 120)."),
    session_id: z.string().min(1).optional().describe("Session to use; omit for your default session."),
  },
  outputSchema: {
    output: z.string(),
    exit_code: z.number().nullable(),
    timed_out: z.boolean(),
    truncated: z.boolean(),
    restarted: z.boolean(),
    note: z.string().optional(),
  },
  async run(args, ctx) {
    const session = await ctx.services.sessions.resolve(ctx.clientId, args.session_id, ctx.signal);
    if (args.restart) {
      await session.shell.restart();
      if (args.command.trim() === "") {
        return {
          output: "",
          exit_code: 0,
          timed_out: false,
          truncated: false,
          restarted: true,
          note: "a fresh shell was started",
        };
      }
    }
    let lines = 0;
    const progressLines = new ProgressLines();
    const report = (done: string[]) => {
      for (const line of done) if (lines++ < 1000) ctx.progress(line);
    };
    const result = await session.bash(args.command, {
      timeoutMs: args.timeout_s === undefined ? undefined : args.timeout_s * 1000,
      signal: ctx.signal,
      onOutput: (text) => report(progressLines.push(text)),
    });
    report(progressLines.flush());
    return {
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
    session_id: z.string().min(1).optional().describe("Session to use; omit for your default session."),
  },
  outputSchema: {
    message: z.string(),
    session_id: z.string(),
    summary: z.string().optional(),
    stat: z.string(),
  },
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
