import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { isAllowedGitKey, personGitConfig, personGitHead } from "../../../src/cli/person-shell-git.js";

/** What git reads from a config file, as `key=value` lines. */
const listed = (config: Buffer): string => {
  const dir = mkdtempSync(join(tmpdir(), "person-git-"));
  try {
    writeFileSync(join(dir, "c"), config);
    return execFileSync("git", ["config", "--file", join(dir, "c"), "--no-includes", "--list"], {
      encoding: "utf8",
    });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
};

describe("the person's git config", () => {
  it("keeps the repository's harmless keys and drops every key that runs a program or reads another file", async () => {
    const repo = Buffer.from(
      [
        "[core]",
        "\trepositoryformatversion = 0",
        "\tfilemode = true",
        "\tbare = false",
        "\tpager = /tmp/evil",
        "\tsshCommand = /tmp/evil",
        "\thooksPath = /tmp/hooks",
        "\tfsmonitor = /tmp/evil",
        "\tworktree = /tmp",
        '[filter "evil"]',
        "\tclean = /tmp/evil",
        "\tprocess = /tmp/evil",
        "[diff]",
        "\texternal = /tmp/evil",
        "\trenames = true",
        '[diff "evil"]',
        "\ttextconv = /tmp/evil",
        "\tcommand = /tmp/evil",
        "[include]",
        "\tpath = /tmp/included",
        '[includeIf "gitdir:/"]',
        "\tpath = /tmp/included",
        "[alias]",
        "\tst = !/tmp/evil",
        '[branch "we\\"ird.name"]',
        "\tremote = origin",
        "\tmerge = refs/heads/main",
        "[user]",
        '\tname = "A \\"quoted\\" name ; not a comment"',
        "",
      ].join("\n"),
    );
    const out = await personGitConfig(repo);
    expect(out.problem).toBeUndefined();
    expect(listed(out.config!).trim().split("\n")).toEqual([
      "core.repositoryformatversion=0",
      "core.filemode=true",
      "diff.renames=true",
      'branch.we"ird.name.remote=origin',
      'branch.we"ird.name.merge=refs/heads/main',
      'user.name=A "quoted" name ; not a comment',
    ]);
    expect(out.dropped).toEqual([
      "core.bare",
      "core.pager",
      "core.sshcommand",
      "core.hookspath",
      "core.fsmonitor",
      "core.worktree",
      "filter.evil.clean",
      "filter.evil.process",
      "diff.external",
      "diff.evil.textconv",
      "diff.evil.command",
      "include.path",
      "includeif.gitdir:/.path",
      "alias.st",
    ]);
  });

  it("refuses a config git cannot read, or one too large, rather than guess", async () => {
    expect((await personGitConfig(Buffer.from("[core\n\tpager = x\n"))).config).toBeNull();
    expect((await personGitConfig(Buffer.alloc(70_000, "#"))).problem).toMatch(/larger than/);
  });

  it("names no key that runs a program on its allowlist", () => {
    for (const key of [
      "core.pager",
      "core.editor",
      "core.askpass",
      "sequence.editor",
      "gpg.program",
      "credential.helper",
      "remote.origin.url",
      "remote.origin.uploadpack",
      "core.gitproxy",
      "merge.evil.driver",
      "submodule.x.update",
    ]) {
      expect(isAllowedGitKey(key), key).toBe(false);
    }
    expect(isAllowedGitKey("branch.main.merge")).toBe(true);
  });

  it("copies HEAD only as a branch or a commit id", () => {
    expect(personGitHead("ref: refs/heads/main\n")).toBe("ref: refs/heads/main\n");
    expect(personGitHead("a".repeat(40))).toBe(`${"a".repeat(40)}\n`);
    for (const bad of [
      "ref: refs/heads/../../config\n",
      "ref: /etc/passwd\n",
      "[core]\n",
      "ref: refs/heads/a\nx\n",
    ]) {
      expect(personGitHead(bad), bad).toBeNull();
    }
  });
});
