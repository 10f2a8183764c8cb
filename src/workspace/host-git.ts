/**
 * The one way drydock runs git on the host, on a repository it does not trust: with an argument
 * array (never a shell), in the repository named (the variables that would point git elsewhere
 * removed), with no system or global configuration, no replace objects, no grafts, no hooks, no
 * fsmonitor, no network, and every key of the repository's own configuration that names a program
 * overridden to run nothing (git-config-guard.ts). The operator's `safe.directory` entries are kept
 * (they say which repositories this host account may open at all).
 */
import { execFile, spawn } from "node:child_process";
import { mkdtemp, rm, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { promisify } from "node:util";
import { CommandExitError, DrydockError } from "../util/errors.js";
import { logger } from "../util/log.js";
import { configEnv, FIXED_SETTINGS, parseConfigListing, programOverrides } from "./git-config-guard.js";

const log = logger("workspace");

/** The longest one host git may take before it is killed (DRYDOCK_GIT_TIMEOUT_S, default 600). */
export const HOST_GIT_TIMEOUT_MS = Math.max(1, Number(process.env.DRYDOCK_GIT_TIMEOUT_S) || 600) * 1000;
const run = promisify(execFile);

/** The caller's variables that still reach git: identity, which the operator may set on purpose. */
const KEPT_GIT_VARIABLES = /^GIT_(AUTHOR|COMMITTER)_(NAME|EMAIL|DATE)$/;

/** The caller's environment without any variable of git's but identity. */
function withoutGitVariables(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (/^GIT_/.test(key) && !KEPT_GIT_VARIABLES.test(key)) continue;
    env[key] = value;
  }
  return env;
}

/** Variables that would redirect git away from the repository named (set when run from a hook). */
const REDIRECTING =
  /^GIT_(DIR|WORK_TREE|INDEX_FILE|OBJECT_DIRECTORY|ALTERNATE_OBJECT_DIRECTORIES|COMMON_DIR|NAMESPACE|PREFIX|QUARANTINE_PATH|CONFIG_PARAMETERS|CONFIG_COUNT|CONFIG_KEY_\d+|CONFIG_VALUE_\d+|EXTERNAL_DIFF|EXEC_PATH)$/;

/**
 * The environment to read the operator's own configuration with (their identity, their
 * safe.directory entries): theirs, where their global configuration is, without what would point
 * git at another repository.
 */
function operatorGitEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env)) if (!REDIRECTING.test(key)) env[key] = value;
  return env;
}

let operatorSafeDirs: Promise<Array<[string, string]>> | undefined;

/** The operator's own `safe.directory` entries (system and global scope), read once. */
function safeDirectories(): Promise<Array<[string, string]>> {
  return (operatorSafeDirs ??= run("git", ["config", "-z", "--get-all", "safe.directory"], {
    cwd: "/",
    env: operatorGitEnv(),
    timeout: 10_000,
  }).then(
    ({ stdout }) =>
      stdout
        .split("\0")
        .filter(Boolean)
        .map((dir): [string, string] => ["safe.directory", dir]),
    () => [],
  ));
}
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

/**
 * The environment host git runs with: the caller's without git's variables, configuration from
 * nowhere but the repository, `overrides` (the repository's program keys neutralised, see
 * repoOverrides) and the fixed settings, then `extra`.
 */
export function hostGitEnv(
  extra: Record<string, string> = {},
  overrides: ReadonlyArray<[string, string]> = [],
): NodeJS.ProcessEnv {
  return {
    ...withoutGitVariables(),
    GIT_CONFIG_NOSYSTEM: "1",
    GIT_CONFIG_SYSTEM: "/dev/null",
    GIT_CONFIG_GLOBAL: "/dev/null",
    GIT_ATTR_NOSYSTEM: "1",
    GIT_NO_REPLACE_OBJECTS: "1",
    // An empty file: git takes no graft from the repository's info/grafts.
    GIT_GRAFT_FILE: "/dev/null",
    GIT_NO_LAZY_FETCH: "1",
    GIT_PROTOCOL_FROM_USER: "0",
    GIT_TERMINAL_PROMPT: "0",
    GIT_ASKPASS: "/bin/false",
    SSH_ASKPASS: "/bin/false",
    GIT_PAGER: "cat",
    PAGER: "cat",
    GIT_EDITOR: "true",
    GIT_SEQUENCE_EDITOR: "true",
    GIT_OPTIONAL_LOCKS: "0",
    // Messages in English so the apply errors can be read for file names.
    LC_ALL: "C",
    ...configEnv([...overrides, ...FIXED_SETTINGS]),
    ...extra,
  };
}

interface ListedConfig {
  /** Each file git read the configuration from, with what stat said of it then. */
  files: Array<[string, string]>;
  overrides: Array<[string, string]>;
}

const listedConfigs = new Map<string, Promise<ListedConfig>>();

async function statSignature(path: string): Promise<string> {
  const info = await stat(path, { bigint: true }).catch(() => undefined);
  return info ? [info.dev, info.ino, info.size, info.mtimeNs, info.ctimeNs].join(":") : "missing";
}

/** Lists the repository's configuration with git's own reader, and the overrides it needs. */
async function listConfig(cwd: string): Promise<ListedConfig> {
  let stdout: Buffer;
  try {
    ({ stdout } = await run("git", ["config", "--list", "-z", "--includes", "--show-origin"], {
      cwd,
      env: hostGitEnv({}, await safeDirectories()),
      encoding: "buffer",
      maxBuffer: 16 * 1024 * 1024,
      timeout: 20_000,
    }));
  } catch (error) {
    const stderr = (error as { stderr?: Buffer }).stderr?.toString("utf8").trim();
    throw new DrydockError(
      "git_failed",
      `git could not read the configuration of ${cwd}: ${stderr || (error as Error).message}; check its .git/config (and any file it includes) with \`git config --list --show-origin\``,
    );
  }
  const settings = parseConfigListing(stdout);
  /** The file a setting came from, absolute; the command line's and the like have none. */
  const originFile = (origin: string) =>
    origin.startsWith("file:") ? resolve(cwd, origin.slice("file:".length)) : undefined;
  const paths = settings.flatMap((s) => originFile(s.origin) ?? []);
  // A file an include names counts too, made or not yet: creating it changes what git reads.
  const included = settings
    .filter((s) => /^include(if\..+)?\.path$/s.test(s.key) && s.value)
    .map((s) => {
      const value = s.value!;
      if (value.startsWith("~/")) return join(process.env.HOME ?? "/", value.slice(2));
      return resolve(dirname(originFile(s.origin) ?? join(cwd, ".")), value);
    });
  const files = await Promise.all(
    [...new Set([...paths, ...included])].map(async (p): Promise<[string, string]> => [
      p,
      await statSignature(p),
    ]),
  );
  // What `includeIf "onbranch:…"` reads depends on HEAD: such a listing is not kept.
  const dependsOnHead = settings.some((s) => /^includeif\.onbranch:/s.test(s.key));
  return { files: dependsOnHead ? [] : files, overrides: programOverrides(settings) };
}

/**
 * The settings that neutralise the program keys of the configuration git would read in `cwd`
 * (with the operator's safe.directory entries): listed once, and again whenever a file it was read
 * from changes.
 */
export async function repoOverrides(cwd: string): Promise<Array<[string, string]>> {
  const key = resolve(cwd);
  const cached = listedConfigs.get(key);
  if (cached) {
    const known = await cached.catch(() => undefined);
    if (known && known.files.length > 0) {
      const same = await Promise.all(known.files.map(async ([p, sig]) => (await statSignature(p)) === sig));
      if (same.every(Boolean)) return [...(await safeDirectories()), ...known.overrides];
    }
    if (listedConfigs.get(key) === cached) listedConfigs.delete(key);
  }
  let pending = listedConfigs.get(key);
  if (!pending) {
    pending = listConfig(key);
    listedConfigs.set(key, pending);
    pending.catch(() => listedConfigs.delete(key));
  }
  return [...(await safeDirectories()), ...(await pending).overrides];
}

/** Runs `git <args>` in `cwd`; throws `CommandExitError` (with git's stderr) on an exit code not in `okExitCodes`. */
export async function runHostGit(
  cwd: string,
  args: readonly string[],
  options: HostGitOptions = {},
): Promise<HostGitResult> {
  log.debug(`git ${args.slice(0, 3).join(" ")} in ${cwd}`);
  const child = spawn("git", args, {
    cwd,
    env: hostGitEnv(options.env, await repoOverrides(cwd)),
    stdio: "pipe",
  });
  // A repository's content can make git wait forever (an ignore file that is a FIFO).
  const timer = setTimeout(() => child.kill("SIGKILL"), HOST_GIT_TIMEOUT_MS);
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
  }).finally(() => clearTimeout(timer));
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
 * Author and committer variables for a commit: the operator's configured identity where there is
 * one, otherwise `drydock <drydock@localhost>` so a repository without user.name/email still
 * works. Given as variables: the git that makes the commit reads no global configuration.
 */
export async function commitIdentityEnv(cwd: string): Promise<Record<string, string>> {
  // One git process for the six keys (each spawn blocks the event loop for a while): the last
  // value of a key wins, as `git config --get` gives it. The identity may be in the operator's
  // global configuration, so it is read as git reads it for the operator; reading configuration
  // runs no program.
  const listed = await run(
    "git",
    ["config", "-z", "--get-regexp", "^(user|author|committer)\\.(name|email)$"],
    {
      cwd,
      env: operatorGitEnv(),
      timeout: 20_000,
    },
  ).catch((error: { code?: unknown; stdout?: string }) => {
    if (error.code === 1) return { stdout: "" };
    throw error;
  });
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
  const set = (variable: string, configured: string | undefined, value: string): void => {
    if (!process.env[variable]) env[variable] = configured ?? value;
  };
  set("GIT_AUTHOR_NAME", authorName ?? userName, "drydock");
  set("GIT_AUTHOR_EMAIL", authorEmail ?? userEmail, "drydock@localhost");
  set("GIT_COMMITTER_NAME", committerName ?? userName, "drydock");
  set("GIT_COMMITTER_EMAIL", committerEmail ?? userEmail, "drydock@localhost");
  return env;
}
