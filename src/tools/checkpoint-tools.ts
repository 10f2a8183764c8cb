/** The checkpoint tools: save a session's state, list the saved ones, go back to one, fork. */
import { z } from "zod";
import { NOT_COPIED } from "../session/session-fork.js";
import { newSessionSecret, sessionSecretHash } from "../session/session-secret.js";
import "./session-access.js";
import { textFirst } from "./reply-text.js";
import { defineTool, type AnyToolDefinition } from "./tool.js";
import { sessionIdInput } from "./session-id-input.js";

const sessionId = sessionIdInput;

const checkpointName = z
  .string()
  .min(1)
  .max(200)
  .describe("Checkpoint name: letters, digits, '.', '_' or '-', at most 64 characters.");

const listing = {
  name: z.string(),
  message: z.string().optional(),
  created_at: z.string(),
  age_s: z.number(),
  bytes: z.number().describe("Changed files (as saved), git index and refs, in bytes."),
  changed_files: z.number().describe("Paths that differ from the session's base."),
  include_ignored: z.boolean(),
  cwd: z
    .string()
    .optional()
    .describe(
      "The shell's working directory when it was saved (absent: saved from the command line, without the shell).",
    ),
};

const size = (bytes: number) =>
  bytes < 10_240 ? `${bytes} bytes` : `${(bytes / 1024 / 1024).toFixed(bytes < 1024 * 1024 ? 2 : 1)} MiB`;
const age = (s: number) =>
  s < 120 ? `${s} s` : s < 7200 ? `${Math.round(s / 60)} min` : `${Math.round(s / 3600)} h`;

export const sessionCheckpoint = defineTool({
  name: "session_checkpoint",
  title: "Save a checkpoint of a session",
  description:
    "Saves the session's state under a name, to come back to with session_restore or to start forks from (session_fork): every file changed, added or deleted since the session started (ignored files, such as build outputs, only with include_ignored), git's index, commits, branches, tags and HEAD, and the shell's working directory and exported variables. Saving under an existing name replaces it. Not saved: running processes, shell functions and non-exported variables, the task stack. Cost follows what changed, not the repository's size. Limits: the server's checkpoints per session and bytes per checkpoint.",
  inputSchema: {
    session_id: sessionId,
    name: checkpointName,
    message: z
      .string()
      .max(500)
      .optional()
      .describe("A note saying what this state is, shown in the listing."),
    include_ignored: z
      .boolean()
      .optional()
      .describe("Also save files .gitignore ignores (build outputs, node_modules); default false."),
  },
  outputSchema: { session_id: z.string(), ...listing, summary: z.string() },
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  replyText: textFirst("summary", ["session_id", "created_at", "age_s", "include_ignored"]),
  async run(args, ctx) {
    const session = await ctx.services.sessions.resolve(ctx.clientId, args.session_id, ctx.signal);
    const saved = await session.checkpoint(args.name, {
      message: args.message,
      includeIgnored: args.include_ignored,
      signal: ctx.signal,
    });
    const summary = `saved checkpoint ${saved.name}: ${saved.changed_files} changed file(s), ${size(saved.bytes)}, ${saved.cwd === undefined ? "shell not saved" : `shell in ${saved.cwd}`}; go back to it with session_restore`;
    return { session_id: session.id, ...saved, summary };
  },
});

export const sessionRestore = defineTool({
  name: "session_restore",
  title: "Restore a session to a checkpoint",
  description:
    "Returns the session's workspace exactly to a checkpoint saved with session_checkpoint: files (changes made since are undone, files added since are removed), git's index, commits, branches and HEAD, and the shell's working directory and exported variables. Running processes are not stopped or restarted; the task stack is not changed. Refused, with nothing changed, when the checkpoint's data in the box was tampered with.",
  inputSchema: { session_id: sessionId, name: checkpointName },
  outputSchema: {
    session_id: z.string(),
    name: z.string(),
    changed_files: z.number().describe("Paths written or removed to get back to the checkpoint."),
    cwd: z
      .string()
      .optional()
      .describe("The shell's working directory after it (absent: the checkpoint has no shell state)."),
    summary: z.string(),
  },
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
  replyText: textFirst("summary", ["session_id"]),
  async run(args, ctx) {
    const session = await ctx.services.sessions.resolve(ctx.clientId, args.session_id, ctx.signal);
    const restored = await session.restore(args.name, ctx.signal);
    const summary = `restored checkpoint ${restored.name}: ${restored.changed_files} path(s) written or removed; ${restored.cwd === undefined ? "the shell was left as it is (the checkpoint was taken from the command line)" : `the shell is in ${restored.cwd}`}`;
    return { session_id: session.id, ...restored, summary };
  },
});

export const sessionCheckpoints = defineTool({
  name: "session_checkpoints",
  title: "List a session's checkpoints",
  description:
    "Lists the session's checkpoints, oldest first, with their sizes, ages and notes, and the limits on them.",
  inputSchema: { session_id: sessionId },
  outputSchema: {
    session_id: z.string(),
    checkpoints: z.array(z.object(listing)),
    max_checkpoints: z.number(),
    max_bytes: z.number(),
  },
  annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
  replyText: (result) => {
    const list = result.checkpoints as Array<{
      name: string;
      message?: string;
      age_s: number;
      bytes: number;
      changed_files: number;
    }>;
    const head = `${list.length} of at most ${String(result.max_checkpoints)} checkpoint(s) in session ${String(result.session_id)} (at most ${size(result.max_bytes as number)} each)`;
    const lines = list.map(
      (c) =>
        `${c.name}  ${age(c.age_s)} ago  ${size(c.bytes)}  ${c.changed_files} changed file(s)${c.message ? `  ${JSON.stringify(c.message)}` : ""}`,
    );
    return [head, ...lines].join("\n");
  },
  async run(args, ctx) {
    const session = await ctx.services.sessions.resolve(ctx.clientId, args.session_id, ctx.signal);
    return {
      session_id: session.id,
      checkpoints: session.checkpoints.list(),
      max_checkpoints: session.checkpoints.limits.maxCheckpoints,
      max_bytes: session.checkpoints.limits.maxBytes,
    };
  },
});

export const sessionFork = defineTool({
  name: "session_fork",
  title: "Fork a session",
  description:
    "Starts n new sessions (default 1), each in a box of its own with the same repository, limits and egress, starting from this session's current state or from one of its checkpoints: files, git's state, and the shell's working directory and exported variables. Forks diverge independently; each has its own audit log naming its parent, and is yours like any session you create (pass its session_id to other tools). Not copied: running processes, background jobs, open ports, non-exported shell variables and functions, the task stack. Refused whole when fewer than n sessions fit on the server.",
  inputSchema: {
    session_id: sessionId,
    n: z.number().int().min(1).max(32).default(1).describe("How many forks (1 to 32, default 1)."),
    checkpoint: checkpointName
      .optional()
      .describe("Start from this checkpoint instead of the current state (it is held by each fork too)."),
  },
  outputSchema: {
    parent: z.string(),
    checkpoint: z.string().optional(),
    forks: z.array(
      z.object({
        session_id: z.string(),
        session_secret: z
          .string()
          .describe("As session_create's: resumes this fork with session_resume. Keep it like a password."),
        box: z.string(),
      }),
    ),
    not_copied: z.string(),
    summary: z.string(),
  },
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
  replyText: textFirst("summary", ["parent", "checkpoint"]),
  async run(args, ctx) {
    const source = await ctx.services.sessions.resolve(ctx.clientId, args.session_id, ctx.signal);
    ctx.progress(`starting ${args.n} box(es) and copying session ${source.id}'s state in`);
    const secrets = Array.from({ length: args.n }, () => newSessionSecret());
    const forks = await ctx.services.sessions.fork(
      ctx.clientId,
      source.id,
      { n: args.n, checkpoint: args.checkpoint, signal: ctx.signal },
      secrets.map(sessionSecretHash),
    );
    const ids = forks.map((f) => f.id);
    return {
      parent: source.id,
      ...(args.checkpoint === undefined ? {} : { checkpoint: args.checkpoint }),
      forks: forks.map((f, i) => ({ session_id: f.id, session_secret: secrets[i]!, box: f.box.shortId })),
      not_copied: NOT_COPIED,
      summary: `forked session ${source.id}${args.checkpoint ? ` at checkpoint ${args.checkpoint}` : ""} into ${ids.length} new session(s): ${ids.join(", ")}; pass session_id to work in one`,
    };
  },
});

export const checkpointTools: AnyToolDefinition[] = [
  sessionCheckpoint,
  sessionRestore,
  sessionCheckpoints,
  sessionFork,
];
