/** The session tools: create, list, destroy, diff and apply a box's changes. */
import { z } from "zod";
import { parseEgressEntries } from "../gateway/egress-allowlist.js";
import type { Session } from "../session/session.js";
import { newSessionSecret, sessionSecretHash } from "../session/session-secret.js";
import { InvalidArgumentError } from "../util/errors.js";
import "./session-access.js";
import { defineTool, type AnyToolDefinition } from "./tool.js";
import { sessionIdInput } from "./session-id-input.js";

const sessionId = sessionIdInput;

const limits = z.object({
  network: z.string(),
  memoryMB: z.number(),
  cpus: z.number(),
  pidsLimit: z.number(),
  workspaceMB: z.number(),
  tmpMB: z.number(),
  command_timeout_s: z.number(),
  max_output_bytes: z.number(),
});

const egressCount = {
  allowed: z.number(),
  refused: z.number(),
  failed: z.number(),
};

const egress = z
  .object({
    allowlist: z.array(z.string()),
    connections: z.object(egressCount),
    bytes_up: z.number(),
    bytes_down: z.number(),
    hosts: z.array(
      z.object({
        host: z.string(),
        port: z.number(),
        ...egressCount,
        bytes_up: z.number(),
        bytes_down: z.number(),
      }),
    ),
  })
  .describe(
    "Hosts the box may reach over HTTPS (empty: nothing leaves the box) and its connections so far, allowed and refused, per host.",
  );

const sessionInfo = {
  session_id: z.string(),
  repo: z.string(),
  base_commit: z.string(),
  image: z.string(),
  box: z.string(),
  created_at: z.string(),
  limits,
  egress,
};

function info(session: Session) {
  return session.info();
}

export const sessionCreate = defineTool({
  name: "session_create",
  title: "Create a sandbox session",
  description:
    "Starts a hardened box (no network, non-root, limited) with a copy of a git repository: HEAD plus uncommitted and untracked (not ignored) files, or a given ref. Returns session_id, base_commit, image and limits. The host repository is unchanged until session_apply. Optional: a tool called without session_id uses your default session, which is your first one (made here or on first use).",
  inputSchema: {
    repo: z
      .string()
      .min(1)
      .optional()
      .describe("Host path of the repository (default: the server's --repo)."),
    ref: z
      .string()
      .min(1)
      .optional()
      .describe(
        "Branch, tag, HEAD or commit id to start from instead of the working tree (no HEAD~1 or @{1}).",
      ),
    network: z
      .string()
      .min(1)
      .optional()
      .describe('Docker network for the box (a relaxation; default "none").'),
    egress: z
      .array(z.string().min(1).max(300))
      .max(64)
      .optional()
      .describe(
        'Hosts the box may reach over HTTPS through the host\'s proxy: names, "*.domain", or sets such as "pypi", "npm"; within the server\'s --egress (default: all of it; [] for none).',
      ),
    memory_mb: z
      .number()
      .int()
      .min(128)
      .optional()
      .describe("Memory limit in MiB, up to the server's --memory-mb (default 2048)."),
    cpus: z.number().min(0.1).optional().describe("CPU limit, up to the server's --cpus (default 1)."),
    timeout_s: z
      .number()
      .int()
      .min(1)
      .max(86_400)
      .optional()
      .describe("Default per-command time limit in seconds (default 120)."),
  },
  outputSchema: {
    ...sessionInfo,
    session_secret: z
      .string()
      .describe(
        "Given once, to you only: with session_id it resumes this session (session_resume) when the server keeps sessions and it restarted, or your connection ended. Keep it like a password; it is not shown again.",
      ),
  },
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
  async run(args, ctx) {
    ctx.progress("starting the box and copying the repository in");
    // Made here, where the reply is written: below this tool only its hash is kept.
    const secret = newSessionSecret();
    const options = {
      repo: args.repo,
      ref: args.ref,
      network: args.network,
      egress: args.egress === undefined ? undefined : parseEgressEntries(args.egress, "egress"),
      memoryMB: args.memory_mb,
      cpus: args.cpus,
      commandTimeoutMs: args.timeout_s === undefined ? undefined : args.timeout_s * 1000,
    };
    const session = await ctx.services.sessions.create(ctx.clientId, options, sessionSecretHash(secret));
    return { ...info(session), session_secret: secret };
  },
});

export const sessionResume = defineTool({
  name: "session_resume",
  title: "Resume a kept session",
  description:
    "Takes up a session the server kept (--keep-sessions) after it restarted or your connection ended, with its session_id and the session_secret session_create returned. Its box, files, task stack and log carry on. A wrong secret, or a session another client holds, is answered as an unknown session.",
  inputSchema: {
    session_id: z.string().min(1).describe("The session to resume."),
    session_secret: z.string().min(1).max(200).describe("The session_secret session_create returned for it."),
  },
  outputSchema: sessionInfo,
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  async run(args, ctx) {
    return info(await ctx.services.sessions.resume(ctx.clientId, args.session_id, args.session_secret));
  },
});

export const sessionList = defineTool({
  name: "session_list",
  title: "List your sessions",
  description:
    "Lists the sessions you created that are still running, with their ids, repositories, base commits and limits.",
  inputSchema: {},
  outputSchema: { sessions: z.array(z.object(sessionInfo)) },
  annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
  async run(_args, ctx) {
    return { sessions: ctx.services.sessions.list(ctx.clientId).map(info) };
  },
});

export const sessionDestroy = defineTool({
  name: "session_destroy",
  title: "Destroy a session",
  description:
    "Removes a session's box and everything in it. Changes not taken out with session_diff or session_apply are lost. The session's task stack is kept on the host.",
  inputSchema: { session_id: z.string().min(1).describe("The session to remove.") },
  outputSchema: { session_id: z.string(), destroyed: z.boolean() },
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
  async run(args, ctx) {
    await ctx.services.sessions.destroy(ctx.clientId, args.session_id);
    return { session_id: args.session_id, destroyed: true };
  },
});

export const sessionDiff = defineTool({
  name: "session_diff",
  title: "Diff of a session",
  description:
    "Returns the binary-safe unified diff of everything changed in the box since the session started, committed in the box or not, plus a diffstat.",
  inputSchema: { session_id: sessionId },
  outputSchema: { session_id: z.string(), base_commit: z.string(), diff: z.string(), stat: z.string() },
  annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
  async run(args, ctx) {
    const session = await ctx.services.sessions.resolve(ctx.clientId, args.session_id, ctx.signal);
    const { diff, stat } = await session.diffWithStat(ctx.signal);
    return { session_id: session.id, base_commit: session.baseCommit, diff, stat };
  },
});

export const sessionApply = defineTool({
  name: "session_apply",
  title: "Apply a session's changes to the host repository",
  description:
    'Brings the session\'s diff to the host repository: mode "branch" (default) commits it on a new branch (drydock/<session_id>) on your last commit, leaving working tree, index and HEAD alone; "worktree" applies it to the working tree. A diff that does not apply changes nothing; the error names the files. Changes to .git, outside the repository or through symlinks are refused; one weakening .gitignore gets a warning (refused in "worktree" unless allow_ignore_changes).',
  inputSchema: {
    session_id: sessionId,
    mode: z.enum(["branch", "worktree"]).default("branch").describe('"branch" (default) or "worktree".'),
    branch: z
      .string()
      .min(1)
      .max(200)
      .optional()
      .describe(
        "Branch mode: the branch to create (default drydock/<session_id>); must not exist unless replace_branch.",
      ),
    replace_branch: z
      .boolean()
      .optional()
      .describe(
        "Branch mode: move an existing branch to the new commit (default false: refuse), to apply a session again.",
      ),
    allow_ignore_changes: z
      .boolean()
      .optional()
      .describe(
        "Worktree mode: apply a diff that weakens .gitignore rules (default false: refuse, as ignored files such as .env would become visible).",
      ),
    include_uncommitted: z
      .boolean()
      .optional()
      .describe("Branch mode: also commit the uncommitted work the session started from (default false)."),
  },
  outputSchema: {
    session_id: z.string(),
    mode: z.enum(["branch", "worktree"]),
    branch: z.string().optional(),
    commit: z.string().optional(),
    files: z.array(z.object({ path: z.string(), status: z.string(), oldPath: z.string().optional() })),
    stat: z.object({ filesChanged: z.number(), insertions: z.number(), deletions: z.number() }),
    message: z.string(),
    warnings: z
      .array(z.string())
      .optional()
      .describe("What to look at before trusting the result: ignore rules the diff removed or weakened."),
  },
  // It writes the host repository: a new branch, a moved one (replace_branch), or the working tree.
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: false },
  async run(args, ctx) {
    const session = await ctx.services.sessions.resolve(ctx.clientId, args.session_id, ctx.signal);
    for (const field of ["replace_branch", "include_uncommitted"] as const) {
      if (args[field] && args.mode !== "branch") {
        throw new InvalidArgumentError(field, 'applies to mode "branch" only; leave it out');
      }
    }
    let result;
    try {
      result = await session.apply({
        mode: args.mode,
        branch: args.branch,
        replaceBranch: args.replace_branch,
        includeUncommitted: args.include_uncommitted,
        allowIgnoreChanges: args.allow_ignore_changes,
        signal: ctx.signal,
      });
    } catch (error) {
      // The library's message names its own option; name this tool's parameter instead.
      if (
        error instanceof InvalidArgumentError &&
        error.field === "branch" &&
        /already exists/.test(error.message)
      ) {
        const branch = args.branch ?? `drydock/${session.id}`;
        throw new InvalidArgumentError(
          "branch",
          `${branch} already exists in ${session.repo.root}; pass another branch, or replace_branch: true to move it to the new commit. Nothing was changed`,
        );
      }
      throw error;
    }
    const message =
      result.files.length === 0
        ? "nothing changed in the box; nothing was applied"
        : result.mode === "branch"
          ? `committed ${result.files.length} file(s) on branch ${result.branch} in ${session.repo.root}; the working tree was not touched`
          : `applied ${result.files.length} file(s) to the working tree of ${session.repo.root}`;
    return {
      session_id: session.id,
      mode: result.mode,
      branch: result.branch,
      commit: result.commit,
      files: result.files,
      stat: result.stat,
      message,
      ...(result.warnings ? { warnings: result.warnings } : {}),
    };
  },
});

export const sessionTools: AnyToolDefinition[] = [
  sessionCreate,
  sessionList,
  sessionDestroy,
  sessionDiff,
  sessionApply,
  sessionResume,
];
