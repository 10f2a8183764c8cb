/**
 * Runs git on the host, in the user's own repository only (never in a directory a box wrote),
 * with an argument array (never a shell), hooks and fsmonitor off, no pager, no prompt, and the
 * variables that could point git at another repository removed from its environment. The user's
 * own configuration still applies (identity, filters), since it is theirs.
 */
import { spawn } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { CommandExitError } from "../util/errors.js";
import { logger } from "../util/log.js";

const log = logger("workspace");

export const HOST_GIT_CONFIG: readonly string[] = [
  "-c",
  "core.hooksPath=/dev/null",
  "-c",
  "core.fsmonitor=false",
  "-c",
  "core.pager=cat",
  "-c",
  "gc.auto=0",
  "-c",
  "maintenance.auto=false",
];

/** Variables that would redirect git away from the repository we name (set when run from a hook). */
const REDIRECTING =
  /^GIT_(DIR|WORK_TREE|INDEX_FILE|OBJECT_DIRECTORY|ALTERNATE_OBJECT_DIRECTORIES|COMMON_DIR|NAMESPACE|PREFIX|QUARANTINE_PATH|CONFIG_PARAMETERS|CONFIG_COUNT|CONFIG_KEY_\d+|CONFIG_VALUE_\d+|EXTERNAL_DIFF|EXEC_PATH)$/;

export interface HostGitOptions {
  /** Bytes or text written to git's stdin. */
  input?: string | Uint8Array;
  /** Extra variables (such as `GIT_INDEX_FILE` for a private index). */
  env?: Record<string, string>;
  /** Exit codes that are answers, not failures (default: only 0). */
  okExitCodes?: readonly number[];
}

export interface HostGitResult {
  stdout: string;
  stderr: string;
  exitCode: number;
}

/** The environment host git runs with: the caller's, minus redirecting variables, plus hardening. */
export function hostGitEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env)) if (!REDIRECTING.test(key)) env[key] = value;
  return {
    ...env,
    GIT_TERMINAL_PROMPT: "0",
    GIT_PAGER: "cat",
    PAGER: "cat",
    GIT_EDITOR: "true",
    GIT_OPTIONAL_LOCKS: "0",
    // Messages in English so the apply errors can be read for file names.
    LC_ALL: "C",
    ...extra,
  };
}

/** Runs `git <args>` in `cwd`; throws `CommandExitError` (with git's stderr) on an exit code not in `okExitCodes`. */
export async function runHostGit(
  cwd: string,
  args: readonly string[],
  options: HostGitOptions = {},
): Promise<HostGitResult> {
  log.debug(`git ${args.slice(0, 3).join(" ")} in ${cwd}`);
  const child = spawn("git", [...HOST_GIT_CONFIG, ...args], {
    cwd,
    env: hostGitEnv(options.env),
    stdio: "pipe",
  });
  const out: Buffer[] = [];
  const err: Buffer[] = [];
  child.stdout.on("data", (chunk: Buffer) => out.push(chunk));
  child.stderr.on("data", (chunk: Buffer) => err.push(chunk));
  // git may exit before reading all of stdin (a refused patch); that is its answer, not our error.
  child.stdin.on("error", () => undefined);
  child.stdin.end(options.input ?? "");
  const exitCode = await new Promise<number>((resolve, reject) => {
    child.on("error", (error: NodeJS.ErrnoException) =>
      reject(
        error.code === "ENOENT"
          ? new CommandExitError(127, "git was not found on PATH; install git on the host", "git")
          : error,
      ),
    );
    child.on("close", (code, signal) => resolve(code ?? (signal ? 128 : 1)));
  });
  const result = {
    stdout: Buffer.concat(out).toString("utf8"),
    stderr: Buffer.concat(err).toString("utf8"),
    exitCode,
  };
  if (!(options.okExitCodes ?? [0]).includes(exitCode)) {
    throw new CommandExitError(exitCode, result.stderr || result.stdout, `git ${args[0] ?? ""} in ${cwd}`);
  }
  return result;
}

/** Runs `fn` with `GIT_INDEX_FILE` pointing at a fresh private index (in a 0700 temp dir), removed afterwards. */
export async function withTempIndex<T>(fn: (env: { GIT_INDEX_FILE: string }) => Promise<T>): Promise<T> {
  const dir = await mkdtemp(join(tmpdir(), "drydock-index-"));
  try {
    return await fn({ GIT_INDEX_FILE: join(dir, "index") });
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/**
 * Author and committer variables for a commit: the user's configured identity where there is one,
 * otherwise `drydock <drydock@localhost>` so a repository without user.name/email still works.
 */
export async function commitIdentityEnv(cwd: string): Promise<Record<string, string>> {
  // One git process for the six keys (each spawn blocks the event loop for a while): the last
  // value of a key wins, as `git config --get` gives it.
  const listed = await runHostGit(
    cwd,
    ["config", "-z", "--get-regexp", "^(user|author|committer)\\.(name|email)$"],
    { okExitCodes: [0, 1] },
  );
  const config = new Map<string, string>();
  for (const item of listed.stdout.split("\0")) {
    const at = item.indexOf("\n");
    if (at > 0) config.set(item.slice(0, at).toLowerCase(), item.slice(at + 1));
  }
  const get = (key: string): string | undefined => config.get(key)?.trim() || undefined;
  const [userName, userEmail, authorName, authorEmail, committerName, committerEmail] = [
    "user.name",
    "user.email",
    "author.name",
    "author.email",
    "committer.name",
    "committer.email",
  ].map(get);
  const env: Record<string, string> = {};
  const fallback = (variable: string, configured: string | undefined, value: string): void => {
    if (configured === undefined && !process.env[variable]) env[variable] = value;
  };
  fallback("GIT_AUTHOR_NAME", authorName ?? userName, "drydock");
  fallback("GIT_AUTHOR_EMAIL", authorEmail ?? userEmail, "drydock@localhost");
  fallback("GIT_COMMITTER_NAME", committerName ?? userName, "drydock");
  fallback("GIT_COMMITTER_EMAIL", committerEmail ?? userEmail, "drydock@localhost");
  return env;
}
