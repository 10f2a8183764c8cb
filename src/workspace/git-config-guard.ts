/**
 * What a repository's own configuration may not do to the git drydock runs on the host: name a
 * program. The keys are read by git itself (`git config --list -z --includes --show-origin`, with
 * system and global configuration off), never by a reader of ours, and each key git reports whose
 * value it would run is given back with a value that runs nothing; those overrides go to git as
 * `GIT_CONFIG_KEY_n` / `GIT_CONFIG_VALUE_n` pairs, which git reads last and which need no quoting
 * (a `-c` argument would be split at its first `=`, and a subsection may hold one).
 *
 * The list is bounded by the commands drydock runs on the host (rev-parse, ls-files, ls-tree,
 * cat-file, status, diff-index, read-tree, write-tree, add, commit-tree, apply, update-ref,
 * check-ref-format, count-objects): the programs they can start from configuration are clean and
 * smudge filters (reading or writing the working tree), external diff and textconv drivers,
 * merge drivers, the fsmonitor, hooks, signing, and anything the network needs (which
 * `protocol.allow=never` refuses before it would start). Pagers and editors are set by variables,
 * which win over configuration. An empty value is what git takes for "no program" for filters and
 * fails closed on for diff and merge drivers.
 *
 * A repository whose configuration moves its working tree (`core.worktree`) is refused by
 * openHostRepo, not overridden here: its files would be another directory's.
 */

/** Canonical keys (git's lower-cased section and name, the subsection as written) that name a program. */
const PROGRAM_KEYS: ReadonlyArray<[RegExp, string]> = [
  [/^filter\..+\.(clean|smudge|process)$/s, ""],
  [/^filter\..+\.required$/s, "false"],
  [/^diff\..+\.(command|textconv)$/s, ""],
  [/^diff\.external$/, ""],
  [/^merge\..+\.driver$/s, ""],
  [/^core\.(sshcommand|gitproxy|askpass|editor|alternaterefscommand)$/, ""],
  [
    /^(sequence\.editor|interactive\.difffilter|gpg\.program|gpg\..+\.program|gpg\.ssh\.defaultkeycommand)$/s,
    "",
  ],
  [/^credential\.(.+\.)?helper$/s, ""],
  [/^remote\..+\.(uploadpack|receivepack|vcs|proxy)$/s, ""],
  [/^pager\..+$/s, "false"],
  // A transport the repository allows by name would win over protocol.allow=never (a lazy fetch of
  // a missing object through `ext::` runs a command).
  [/^protocol\..+\.allow$/s, "never"],
];

/** Settings every host git gets, whatever the repository says. */
export const FIXED_SETTINGS: ReadonlyArray<[string, string]> = [
  ["core.hooksPath", "/dev/null"],
  ["core.fsmonitor", "false"],
  ["core.pager", "cat"],
  ["core.useReplaceRefs", "false"],
  ["gc.auto", "0"],
  ["maintenance.auto", "false"],
  ["protocol.allow", "never"],
  ["commit.gpgSign", "false"],
  ["tag.gpgSign", "false"],
  ["submodule.recurse", "false"],
  ["diff.ignoreSubmodules", "all"],
  ["status.submoduleSummary", "false"],
];

/** One setting of `git config --list -z --show-origin`: where git read it, its key, its value (null: none). */
export interface ListedSetting {
  origin: string;
  key: string;
  value: string | null;
}

/** Parses `git config --list -z --show-origin` output: `origin\0key\nvalue\0`, or `origin\0key\0` for a key with no value. */
export function parseConfigListing(out: Buffer | string): ListedSetting[] {
  const fields = (typeof out === "string" ? out : out.toString("utf8")).split("\0");
  const settings: ListedSetting[] = [];
  for (let i = 0; i + 1 < fields.length; i += 2) {
    const origin = fields[i]!;
    const item = fields[i + 1]!;
    const at = item.indexOf("\n");
    settings.push(
      at < 0
        ? { origin, key: item, value: null }
        : { origin, key: item.slice(0, at), value: item.slice(at + 1) },
    );
  }
  return settings;
}

/** The override for each listed key that names a program, in the order git listed them. */
export function programOverrides(settings: readonly ListedSetting[]): Array<[string, string]> {
  const out = new Map<string, string>();
  for (const { key } of settings) {
    const found = PROGRAM_KEYS.find(([pattern]) => pattern.test(key));
    if (found) out.set(key, found[1]);
  }
  return [...out];
}

/** Variables that give git `settings` as configuration of the command-line scope (read last). */
export function configEnv(settings: ReadonlyArray<[string, string]>): Record<string, string> {
  const env: Record<string, string> = { GIT_CONFIG_COUNT: String(settings.length) };
  settings.forEach(([key, value], i) => {
    env[`GIT_CONFIG_KEY_${i}`] = key;
    env[`GIT_CONFIG_VALUE_${i}`] = value;
  });
  return env;
}
