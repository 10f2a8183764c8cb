/**
 * git_diff: the changes in the box's repository, untracked files included, against HEAD or a
 * given commit. A private index is used, so the agent's own index and staging stay as they are.
 */
import { z } from "zod";
import { boxSh } from "../sandbox/box-channel.js";
import { resolveWorkspacePath } from "../sandbox/workspace-path.js";
import { CommandExitError, InvalidArgumentError, PathOutsideWorkspaceError } from "../util/errors.js";
import { EXIT, RESOLVE } from "./box-file-scripts.js";
import { parseArgs } from "./parse-args.js";
import { textFirst } from "./reply-text.js";
import { defineTool } from "./tool.js";
import { sessionIdInput } from "./session-id-input.js";
import { boxScript } from "../util/box-script.js";

/** Most bytes of diff returned (256 KiB); the rest is counted and left out. */
export const GIT_DIFF_MAX_BYTES = 256 * 1024;

const NOT_A_REPO = 80;
const BAD_BASE = 81;

// $1 path, $2 base ("" for HEAD), $3 cap. Starts from the nearest existing directory so a deleted
// file can still be named; copies the real index so unchanged files are not hashed again, then
// stages the whole working tree in the copy (a pathspec that matches nothing would be an error).
// One git diff writes the shortstat line, a blank line and the patch; the reply splits them.
const DIFF_SCRIPT = RESOLVE + boxScript("tools/git-diff.sh", { NOT_A_REPO, BAD_BASE });

const gitDiffInput = {
  base_commit: z
    .string()
    .optional()
    .describe("A commit-ish (hash, branch, tag, HEAD~2) to compare against; default HEAD."),
  path: z
    .string()
    .optional()
    .describe(
      "Only this file or directory under /workspace (a nested repository diffs itself). Default /workspace.",
    ),
  session_id: sessionIdInput,
};

export const gitDiffTool = defineTool({
  name: "git_diff",
  title: "Show changes in the workspace repository",
  description: [
    "Shows the unified git diff of the session's /workspace: every change in the working tree, untracked files included, against HEAD or base_commit (then commits since it count too). Your git index is not touched.",
    "Returns the diff, its base and a summary (files changed, insertions, deletions).",
    `At most ${GIT_DIFF_MAX_BYTES / 1024} KB of diff, then truncated is true: narrow it with path.`,
  ].join(" "),
  inputSchema: gitDiffInput,
  outputSchema: {
    diff: z.string().describe("The unified diff; empty when nothing changed."),
    base: z.string().describe("The commit the diff is taken against."),
    path: z.string(),
    summary: z.string().describe("git's --shortstat line, or 'no changes'."),
    files_changed: z.number().int(),
    insertions: z.number().int(),
    deletions: z.number().int(),
    truncated: z.boolean(),
    total_bytes: z.number().int().describe("Size of the whole diff, even when cut."),
  },
  annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
  // The diff as it is, then the summary and base: what `git diff` and its --shortstat show.
  replyText: textFirst("diff", ["files_changed", "insertions", "deletions"]),
  async run(input, ctx) {
    const args = parseArgs(gitDiffInput, input, "git_diff");
    const base = args.base_commit?.trim() ?? "";
    if (args.base_commit !== undefined && !/^[^\s-][^\s]*$/.test(base)) {
      throw new InvalidArgumentError(
        "base_commit",
        `${JSON.stringify(args.base_commit)} is not a commit-ish; give a hash, branch, tag or an expression like HEAD~1 (it may not start with "-" or hold spaces)`,
      );
    }
    const path = resolveWorkspacePath(args.path ?? "/workspace", "path");
    const session = await ctx.services.sessions.resolve(ctx.clientId, args.session_id, ctx.signal);
    const result = await boxSh(session.box, DIFF_SCRIPT, [path, base, String(GIT_DIFF_MAX_BYTES)], {
      timeoutMs: session.commandTimeoutMs,
      maxOutputBytes: GIT_DIFF_MAX_BYTES + 8192,
      signal: ctx.signal,
    });
    const detail = result.stderr.toString("utf8").trim();
    if (result.exitCode === EXIT.OUTSIDE) {
      throw new PathOutsideWorkspaceError(args.path ?? path, `it resolves (through a symlink) to ${detail}`);
    }
    if (result.exitCode === NOT_A_REPO) {
      throw new InvalidArgumentError(
        "path",
        `${detail} is not inside a git repository; give a path in the repository`,
      );
    }
    if (result.exitCode === BAD_BASE) {
      throw new InvalidArgumentError(
        "base_commit",
        `${detail} is not a commit in the box's repository; list commits with bash (git log --oneline) and pass one of them`,
      );
    }
    if (result.exitCode !== 0) throw new CommandExitError(result.exitCode, detail, "git diff");

    const out = result.stdout;
    const fields: string[] = [];
    let at = 0;
    for (let i = 0; i < 3; i++) {
      const end = out.indexOf(0, at);
      fields.push(out.subarray(at, end === -1 ? at : end).toString("utf8"));
      at = end === -1 ? out.length : end + 1;
    }
    const [resolvedBase = "", size = "0", shortstat = ""] = fields;
    const totalBytes = Number(size);
    let diff = out.subarray(at).toString("utf8");
    const truncated = totalBytes > GIT_DIFF_MAX_BYTES;
    if (truncated) {
      diff = diff.replace(/\uFFFD+$/, "");
      diff += `\n[diff cut at ${GIT_DIFF_MAX_BYTES} of ${totalBytes} bytes; pass path to see one file or directory, or run git diff --stat in bash]\n`;
    }
    const count = (pattern: RegExp): number => Number(pattern.exec(shortstat)?.[1] ?? 0);
    return {
      diff,
      base: resolvedBase,
      path,
      summary: shortstat.trim() || "no changes",
      files_changed: count(/(\d+) files? changed/),
      insertions: count(/(\d+) insertions?/),
      deletions: count(/(\d+) deletions?/),
      truncated,
      total_bytes: totalBytes,
    };
  },
});
