/**
 * The git directory of a person's shell: the agent wrote the repository's `.git/config` (and can
 * rewrite it at any moment), and a config key can run a program (`filter.*.clean`,
 * `diff.external`, `diff.*.textconv`, `core.pager`, `alias.*`, `include.path` to a file that
 * does, …). So the person's git never reads it. drydock reads its bytes out of the box once, has
 * git's own parser list them (`git config --file COPY --no-includes -z --list`, on the host, over
 * that one copy), keeps only the keys on ALLOWED_KEYS, and writes a new config from them with git
 * itself. The person's git directory holds that config and a copy of HEAD, and links to the
 * repository's objects, refs, reflogs and info (data, never configuration); the index is a copy of
 * the repository's, read once, without submodule entries (SUBMODULE_MODE). Nothing is checked in
 * the box and then read again.
 */
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { runHostGit } from "../workspace/host-git.js";

/** The most of `.git/config` read: a larger one is not a repository's own, and is not used. */
export const MAX_GIT_CONFIG_BYTES = 64 * 1024;

/**
 * Keys kept from the repository's config, as git lists them (section and name lower case): each
 * one only describes the repository or how to show it; none names a program, a path read as
 * configuration, a remote to run, or a hook. `*` is one subsection (a branch's name).
 */
const ALLOWED_KEYS: readonly RegExp[] = [
  /^core\.(repositoryformatversion|filemode|logallrefupdates|ignorecase|precomposeunicode|symlinks|autocrlf|eol|safecrlf|quotepath|abbrev|checkstat|trustctime)$/,
  /^extensions\.objectformat$/,
  /^user\.(name|email)$/,
  /^init\.defaultbranch$/,
  /^branch\.[^\n]+\.(remote|merge)$/,
  /^diff\.(renames|algorithm|mnemonicprefix|noprefix|context|interhunkcontext|indentheuristic)$/,
  /^status\.(showuntrackedfiles|short|branch|relativepaths|renames)$/,
];

/** Where the person's git directory links into the repository's (all data: objects, refs, logs, excludes). */
export const GIT_DIR_LINKS = ["objects", "refs", "packed-refs", "logs", "info", "shallow"] as const;

/** The repository's git directory in the box. */
export const REPO_GIT_DIR = "/workspace/.git";

/**
 * Settings the person's git runs with over any file (GIT_CONFIG_COUNT): belt and braces for what
 * would run a program, and submodules left alone (a submodule's git reads its own config, which
 * the agent wrote).
 */
export const PERSON_GIT_OVERRIDES: readonly [string, string][] = [
  ["core.fsmonitor", "false"],
  ["core.hooksPath", "/dev/null"],
  ["core.attributesFile", "/dev/null"],
  ["commit.gpgSign", "false"],
  ["tag.gpgSign", "false"],
  ["diff.ignoreSubmodules", "all"],
  ["status.submoduleSummary", "false"],
  ["submodule.recurse", "false"],
  ["protocol.allow", "never"],
  ["core.useReplaceRefs", "false"],
];

/**
 * The person's git reads a copy of the agent's index with every submodule entry (mode 160000)
 * removed: for a submodule it knows of, `git status` runs git inside the submodule's directory,
 * under that directory's own config (the agent's, any filter it names), and a `.gitmodules`
 * entry's `ignore = none` wins over diff.ignoreSubmodules. With no submodule in the index there is
 * nothing to recurse into: by construction, whatever `.gitmodules` says.
 */
export const SUBMODULE_MODE = "160000";

/** The paths of submodule entries in `git ls-files --stage -z` output. */
export function submodulePaths(staged: Buffer): string[] {
  const out: string[] = [];
  for (const item of staged.toString("utf8").split("\0")) {
    const tab = item.indexOf("\t");
    if (tab > 0 && item.startsWith(`${SUBMODULE_MODE} `)) out.push(item.slice(tab + 1));
  }
  return out;
}

export interface PersonGitConfig {
  /** The config drydock wrote (git's own format), or null when the repository's could not be read. */
  config: Buffer | null;
  /** Keys of the repository's config left out (not on the allowlist), for the person to see. */
  dropped: string[];
  /** Why the repository's config was not used at all, when it was not. */
  problem?: string;
}

/** Whether a key, as git lists it, is kept. */
export function isAllowedGitKey(key: string): boolean {
  return ALLOWED_KEYS.some((pattern) => pattern.test(key));
}

/**
 * The person's config from the bytes of the repository's `.git/config` (read once, by the caller):
 * parsed by host git, filtered by the allowlist, written again by host git.
 */
export async function personGitConfig(repoConfig: Buffer): Promise<PersonGitConfig> {
  if (repoConfig.length > MAX_GIT_CONFIG_BYTES) {
    return { config: null, dropped: [], problem: `it is larger than ${MAX_GIT_CONFIG_BYTES} bytes` };
  }
  const dir = await mkdtemp(join(tmpdir(), "drydock-person-git-"));
  // No system or user file, no repository around: git reads only the copy it is given.
  const env = {
    GIT_CONFIG_NOSYSTEM: "1",
    GIT_CONFIG_GLOBAL: "/dev/null",
    GIT_CEILING_DIRECTORIES: dirname(dir),
  };
  try {
    const copy = join(dir, "repo-config");
    await writeFile(copy, repoConfig, { mode: 0o600 });
    const listed = await runHostGit(dir, ["config", "--file", copy, "--no-includes", "-z", "--list"], {
      env,
      okExitCodes: [0, 128, 1, 3],
    });
    if (listed.exitCode !== 0) {
      return {
        config: null,
        dropped: [],
        problem: `git cannot read it: ${listed.stderr.trim().split("\n")[0]}`,
      };
    }
    const out = join(dir, "config");
    await writeFile(out, "", { mode: 0o600 });
    const dropped: string[] = [];
    for (const item of listed.stdout.split("\0")) {
      if (item === "") continue;
      const at = item.indexOf("\n");
      // A key with no `=` lists without a value: it is a boolean true.
      const [key, value] = at < 0 ? [item, "true"] : [item.slice(0, at), item.slice(at + 1)];
      if (!isAllowedGitKey(key)) {
        if (!dropped.includes(key)) dropped.push(key);
        continue;
      }
      await runHostGit(dir, ["config", "--file", out, "--add", key, value], { env });
    }
    return { config: await readFile(out), dropped };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/**
 * The repository's HEAD as the person's git gets it: a symbolic ref to a branch or a commit id,
 * as git writes them; anything else is not copied (null).
 */
export function personGitHead(text: string): string | null {
  const line = text.endsWith("\n") ? text.slice(0, -1) : text;
  if (/^ref: refs\/heads\/[^\s\0\\~^:?*[]+$/.test(line) && !line.includes("..")) return `${line}\n`;
  if (/^(?:[0-9a-f]{40}|[0-9a-f]{64})$/.test(line)) return `${line}\n`;
  return null;
}
