/**
 * Host git on a repository drydock does not trust, with real git on real temp repositories: the
 * repository's configuration runs no program of its own through drydock's git (a filter, a diff or
 * merge driver, an fsmonitor, a hook, a file it includes), a replace ref or a graft does not change
 * what a commit id stands for, a misnamed object is refused, an alternate store outside the
 * repository and a working tree moved elsewhere are refused, and a client's ref is a branch, a
 * tag, HEAD or a commit id, never revision syntax.
 */
import { execFileSync } from "node:child_process";
import {
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  realpathSync,
  renameSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { join } from "node:path";
import { deflateSync } from "node:zlib";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { repoFiles } from "../../../src/environment/repo-files.js";
import { commitTreeTar } from "../../../src/workspace/commit-tree-tar.js";
import { runHostGit } from "../../../src/workspace/host-git.js";
import { openHostRepo } from "../../../src/workspace/host-repo.js";
import { snapshotCommit } from "../../../src/workspace/snapshot-commit.js";
import { planSnapshot, resolveCommit } from "../../../src/workspace/snapshot-plan.js";
import { verifiedCommitTree } from "../../../src/workspace/verified-objects.js";
import { git, isolateGitConfig, makeRepo, Scratch } from "./host-repo-fixture.js";

let scratch: Scratch;
beforeAll(() => isolateGitConfig());
afterEach(() => scratch?.dispose());

/** A program that leaves a mark when it runs, as a repository's configured program would. */
function markingProgram(dir: string, name: string): { path: string; ran: () => boolean } {
  const mark = join(dir, `${name}.ran`);
  const path = join(dir, `${name}.sh`);
  writeFileSync(path, `#!/bin/sh\necho ran >> ${mark}\ncat\n`, { mode: 0o755 });
  return { path, ran: () => existsSync(mark) };
}

async function tarText(root: string, commit: string): Promise<string> {
  const parts: Buffer[] = [];
  for await (const piece of commitTreeTar(root, commit)) parts.push(piece.bytes);
  return Buffer.concat(parts).toString("latin1");
}

describe("host git and the repository's own configuration", () => {
  const programKeys: Array<[string, (program: string) => Array<[string, string]>]> = [
    ["filter.<driver>.clean", (p) => [["filter.evil.clean", p]]],
    ["filter.<driver>.process", (p) => [["filter.evil.process", p]]],
    [
      "filter.<driver>.smudge and required",
      (p) => [
        ["filter.evil.smudge", p],
        ["filter.evil.required", "true"],
        ["filter.evil.clean", p],
      ],
    ],
    ["a driver name with a dot", (p) => [["filter.ev.il.clean", p]]],
    ["diff.external", (p) => [["diff.external", p]]],
    [
      "diff.<driver>.textconv and command",
      (p) => [
        ["diff.evil.textconv", p],
        ["diff.evil.command", p],
      ],
    ],
    ["core.fsmonitor", (p) => [["core.fsmonitor", p]]],
    ["core.hooksPath", (p) => [["core.hooksPath", join(p, "..")]]],
  ];

  for (const [what, settings] of programKeys) {
    it(`runs no program a repository names in ${what}, in status, diff-index, add and commit`, async () => {
      scratch = new Scratch();
      const program = markingProgram(scratch.root, "evil");
      const repo = makeRepo(join(scratch.root, "repo"), {
        ".gitattributes": "* filter=evil diff=evil merge=evil\n*.txt filter=ev.il\n",
        "a.txt": "one\n",
      });
      for (const [key, value] of settings(program.path)) git(repo, "config", key, value);
      // Hooks under their own names in the directory core.hooksPath names.
      for (const hook of ["pre-commit", "post-commit", "post-index-change", "reference-transaction"]) {
        writeFileSync(
          join(scratch.root, hook),
          `#!/bin/sh\necho ran >> ${join(scratch.root, "evil.ran")}\n`,
          {
            mode: 0o755,
          },
        );
      }
      // Another size, so git never takes the edit for the committed file by its stat data.
      writeFileSync(join(repo, "a.txt"), "two, longer\n");
      writeFileSync(join(repo, "b.txt"), "new\n");
      const plan = await planSnapshot(repo);
      expect(plan.files.sort()).toEqual(["a.txt", "b.txt"]);
      const commit = await snapshotCommit(repo);
      expect(git(repo, "-c", "core.fsmonitor=false", "show", `${commit}:a.txt`)).toBe("two, longer\n");
      // Porcelain diff too, which would run external diff and textconv drivers if they were set.
      const anyExit = { okExitCodes: Array.from({ length: 256 }, (_, i) => i) };
      await runHostGit(repo, ["diff-index", "--cached", "-p", "HEAD"], anyExit);
      await runHostGit(repo, ["diff", "HEAD"], anyExit);
      await runHostGit(repo, ["diff", "--textconv", "HEAD"], anyExit);
      expect(program.ran()).toBe(false);
    });
  }

  it("runs no program named in a file the repository's configuration includes", async () => {
    scratch = new Scratch();
    const program = markingProgram(scratch.root, "evil");
    const repo = makeRepo(join(scratch.root, "repo"), {
      ".gitattributes": "* filter=evil\n",
      "a.txt": "one\n",
    });
    writeFileSync(join(scratch.root, "included"), `[filter "evil"]\n\tclean = ${program.path}\n`);
    git(repo, "config", "include.path", join(scratch.root, "included"));
    writeFileSync(join(repo, "a.txt"), "two, longer\n");
    await snapshotCommit(repo);
    expect(program.ran()).toBe(false);
  });

  it("reads the configuration again when what it includes changes: a branch switched to, a file made later", async () => {
    scratch = new Scratch();
    const program = markingProgram(scratch.root, "evil");
    const repo = makeRepo(join(scratch.root, "repo"), {
      ".gitattributes": "* filter=evil\n",
      "a.txt": "one\n",
    });
    writeFileSync(join(repo, ".git", "on-branch.cfg"), `[filter "evil"]\n\tclean = ${program.path}\n`);
    git(repo, "config", "includeIf.onbranch:evil.path", "on-branch.cfg");
    git(repo, "config", "include.path", join(scratch.root, "later.cfg"));
    // Listed (and kept) while on main, where neither include gives anything.
    writeFileSync(join(repo, "a.txt"), "two, longer\n");
    await snapshotCommit(repo);
    // Switched by HEAD alone: the test's own git would run the filter on a checkout.
    git(repo, "branch", "evil");
    git(repo, "symbolic-ref", "HEAD", "refs/heads/evil");
    writeFileSync(join(repo, "a.txt"), "three, longer still\n");
    await snapshotCommit(repo);
    git(repo, "symbolic-ref", "HEAD", "refs/heads/main");
    writeFileSync(join(scratch.root, "later.cfg"), `[filter "evil"]\n\tclean = ${program.path}\n`);
    writeFileSync(join(repo, "a.txt"), "four, the longest of all\n");
    await snapshotCommit(repo);
    expect(program.ran()).toBe(false);
  });

  it("refuses a repository whose configuration moves its working tree to another directory", async () => {
    scratch = new Scratch();
    const elsewhere = join(scratch.root, "host-secrets");
    mkdirSync(elsewhere);
    writeFileSync(join(elsewhere, "credentials"), "secret\n");
    const repo = makeRepo(join(scratch.root, "repo"), { "a.txt": "one\n" });
    git(repo, "config", "core.worktree", elsewhere);
    await expect(openHostRepo(repo)).rejects.toThrow(/core\.worktree/);
  });
});

describe("what a commit id stands for", () => {
  /** A victim's commit, and an attacker's repository that holds it and a replacement for it. */
  function replaced() {
    scratch = new Scratch();
    const victim = makeRepo(join(scratch.root, "victim"), { "conftest.py": "# the real one\n" });
    const commit = git(victim, "rev-parse", "HEAD").trim();
    const attacker = join(scratch.root, "attacker");
    git(scratch.root, "clone", "-q", victim, attacker);
    git(attacker, "config", "user.name", "A");
    git(attacker, "config", "user.email", "a@example.com");
    writeFileSync(join(attacker, "conftest.py"), "import os  # planted\n");
    git(attacker, "commit", "-qam", "planted");
    const planted = git(attacker, "rev-parse", "HEAD").trim();
    git(attacker, "update-ref", `refs/replace/${commit}`, planted);
    return { victim, attacker, commit, planted };
  }

  it("ignores replace refs: the commit's own files are read, and keyed by its own tree", async () => {
    const { victim, attacker, commit } = replaced();
    // What git shows by default is the replacement: the attack is real on this git.
    expect(git(attacker, "show", `${commit}:conftest.py`)).toContain("planted");
    const files = await repoFiles(attacker, commit);
    expect((await files.read("conftest.py"))?.toString()).toBe("# the real one\n");
    expect(files.source).toBe(`tree ${git(victim, "rev-parse", `${commit}^{tree}`).trim()}`);
    expect(await tarText(attacker, commit)).toContain("# the real one");
    expect(await resolveCommit(await openHostRepo(attacker), commit)).toBe(commit);
  });

  it("refuses a commit id a repository holds only as a replace ref", async () => {
    scratch = new Scratch();
    const victim = makeRepo(join(scratch.root, "victim"), { "a.txt": "real\n" });
    const commit = git(victim, "rev-parse", "HEAD").trim();
    const attacker = makeRepo(join(scratch.root, "attacker"), { "a.txt": "planted\n" });
    git(attacker, "update-ref", `refs/replace/${commit}`, git(attacker, "rev-parse", "HEAD").trim());
    await expect(repoFiles(attacker, commit)).rejects.toThrow(/names no commit/);
  });

  it("ignores grafts", async () => {
    scratch = new Scratch();
    const repo = makeRepo(join(scratch.root, "repo"), { "a.txt": "one\n" });
    const first = git(repo, "rev-parse", "HEAD").trim();
    writeFileSync(join(repo, "a.txt"), "two\n");
    git(repo, "commit", "-qam", "second");
    const second = git(repo, "rev-parse", "HEAD").trim();
    writeFileSync(join(repo, ".git", "info", "grafts"), `${second}\n`);
    const parents = (await runHostGit(repo, ["rev-list", "--parents", "-n", "1", second])).stdout.trim();
    expect(parents).toBe(`${second} ${first}`);
  });

  it("refuses an object whose bytes are not the ones its name stands for", async () => {
    scratch = new Scratch();
    const repo = makeRepo(join(scratch.root, "repo"), { "conftest.py": "# the real one\n" });
    const commit = git(repo, "rev-parse", "HEAD").trim();
    const blob = git(repo, "rev-parse", "HEAD:conftest.py").trim();
    // The loose object file of the blob, rewritten with other bytes under the same name.
    const other = Buffer.from("import os  # planted\n");
    const path = join(repo, ".git", "objects", blob.slice(0, 2), blob.slice(2));
    rmSync(path, { force: true });
    writeFileSync(path, deflateSync(Buffer.concat([Buffer.from(`blob ${other.length}\0`), other])));
    expect(git(repo, "cat-file", "blob", blob)).toContain("planted");
    await expect(tarText(repo, commit)).rejects.toThrow(/not that object's/);
    const files = await repoFiles(repo, commit);
    await expect(files.read("conftest.py")).rejects.toThrow(/not that object's/);
  });

  it("refuses a repository that borrows objects from a directory outside itself", async () => {
    scratch = new Scratch();
    const other = makeRepo(join(scratch.root, "private"), { "secret.txt": "secret\n" });
    const repo = makeRepo(join(scratch.root, "repo"), { "a.txt": "one\n" });
    writeFileSync(join(repo, ".git", "objects", "info", "alternates"), `${join(other, ".git", "objects")}\n`);
    await expect(openHostRepo(repo)).rejects.toThrow(/borrows objects from outside itself/);
    const commit = git(repo, "rev-parse", "HEAD").trim();
    await expect(tarText(repo, commit)).rejects.toThrow(/borrows objects/);
  });

  it("refuses any other store, however the alternates file spells or reaches it", async () => {
    scratch = new Scratch();
    const other = makeRepo(join(scratch.root, "private"), { "secret.txt": "secret\n" });
    // .git is a link elsewhere, and the entry is relative: git resolves it against the path it
    // names the store by, which a check of where the link leads would get wrong.
    const repo = makeRepo(join(scratch.root, "repo"), { "a.txt": "one\n" });
    renameSync(join(repo, ".git"), join(scratch.root, "elsewhere.git"));
    symlinkSync(join(scratch.root, "elsewhere.git"), join(repo, ".git"));
    writeFileSync(join(repo, ".git", "objects", "info", "alternates"), "../../private/.git/objects\n");
    await expect(openHostRepo(repo)).rejects.toThrow(/borrows objects|not its own/);
    // The same entry with .git a directory of the repository's own again.
    rmSync(join(repo, ".git"));
    renameSync(join(scratch.root, "elsewhere.git"), join(repo, ".git"));
    await expect(openHostRepo(repo)).rejects.toThrow(/borrows objects/);
    // An entry inside the repository, a comment before it, and the file itself a link.
    writeFileSync(join(repo, ".git", "objects", "info", "alternates"), "# a comment\n./pack/..\n");
    await expect(openHostRepo(repo)).rejects.toThrow(/borrows objects/);
    rmSync(join(repo, ".git", "objects", "info", "alternates"));
    writeFileSync(join(scratch.root, "alternates"), `${join(other, ".git", "objects")}\n`);
    symlinkSync(join(scratch.root, "alternates"), join(repo, ".git", "objects", "info", "alternates"));
    await expect(openHostRepo(repo)).rejects.toThrow(/borrows objects/);
    // With no entry at all, it opens.
    rmSync(join(repo, ".git", "objects", "info", "alternates"));
    writeFileSync(join(repo, ".git", "objects", "info", "alternates"), "# nothing\n\n");
    expect((await openHostRepo(repo)).root).toBe(realpathSync(repo));
  });

  it("reads the same files and bytes as git for an honest commit", async () => {
    scratch = new Scratch();
    const repo = makeRepo(join(scratch.root, "repo"), {
      "a.txt": "one\n",
      "dir/b.txt": "two\n",
      "dir/sub/c.bin": Buffer.from([0, 1, 2, 255]),
      "run.sh": { exec: "#!/bin/sh\n" },
      link: { symlink: "a.txt" },
    });
    const commit = git(repo, "rev-parse", "HEAD").trim();
    const files = await repoFiles(repo, commit);
    expect(await files.list()).toEqual(git(repo, "ls-tree", "-r", "--name-only", commit).trim().split("\n"));
    expect(await files.read("dir/sub/c.bin")).toEqual(readFileSync(join(repo, "dir/sub/c.bin")));
  });
});

describe("a client's ref", () => {
  function repoWithHistory() {
    scratch = new Scratch();
    const repo = makeRepo(join(scratch.root, "repo"), { "secret.txt": "removed later\n" });
    const first = git(repo, "rev-parse", "HEAD").trim();
    git(repo, "rm", "-q", "secret.txt");
    writeFileSync(join(repo, "a.txt"), "a\n");
    git(repo, "add", "a.txt");
    git(repo, "commit", "-qm", "second");
    git(repo, "tag", "v1");
    git(repo, "branch", "feature");
    return { repo, first };
  }

  it("is a branch, a tag, HEAD, a remote-tracking branch or a full or abbreviated commit id", async () => {
    const { repo, first } = repoWithHistory();
    const host = await openHostRepo(repo);
    const head = git(repo, "rev-parse", "HEAD").trim();
    expect(await resolveCommit(host, "main")).toBe(head);
    expect(await resolveCommit(host, "refs/heads/feature")).toBe(head);
    expect(await resolveCommit(host, "v1")).toBe(head);
    expect(await resolveCommit(host, "HEAD")).toBe(head);
    expect(await resolveCommit(host, first)).toBe(first);
    expect(await resolveCommit(host, first.slice(0, 10))).toBe(first);
  });

  for (const ref of [
    "HEAD@{1}",
    "main@{1}",
    "@{-1}",
    "@",
    "HEAD~1",
    "HEAD^",
    "main^{tree}",
    "main:secret.txt",
    ":/removed",
    "main..feature",
    "main...feature",
    "-all",
    "--all",
    "refs/replace/x",
    "refs/stash",
    "main.lock",
    "a//b",
    "a b",
    "a\nb",
    "",
  ]) {
    it(`refuses ${JSON.stringify(ref)}, naming the ref field and the forms it may take`, async () => {
      const { repo } = repoWithHistory();
      const refused = await resolveCommit(await openHostRepo(repo), ref).then(
        () => undefined,
        (error: unknown) => error as { field?: string; message: string },
      );
      expect(refused?.field).toBe("ref");
      expect(refused?.message).toMatch(/give a branch or tag name .* HEAD, or a commit id/);
    });
  }

  it("refuses a name that is both a branch and the start of a commit id", async () => {
    const { repo, first } = repoWithHistory();
    const prefix = first.slice(0, 8);
    git(repo, "branch", prefix);
    await expect(resolveCommit(await openHostRepo(repo), prefix)).rejects.toThrow(
      /both a branch or tag name and a commit id/,
    );
  });
});

describe("a repository's store is its own", () => {
  function victimAndAttacker() {
    scratch = new Scratch();
    const victim = makeRepo(join(scratch.root, "victim"), { "secret.env": "KEY=1\n" });
    const attacker = makeRepo(join(scratch.root, "attacker"), { "a.txt": "a\n" });
    return { victim, attacker };
  }

  it("refuses objects and refs linked from another repository, a commondir file naming one, and .git as a link", async () => {
    const { victim, attacker } = victimAndAttacker();
    rmSync(join(attacker, ".git", "objects"), { recursive: true });
    symlinkSync(join(victim, ".git", "objects"), join(attacker, ".git", "objects"));
    await expect(openHostRepo(attacker)).rejects.toThrow(/not its own \(objects is a link\)/);

    const second = makeRepo(join(scratch.root, "second"), { "a.txt": "a\n" });
    writeFileSync(join(second, ".git", "commondir"), join(victim, ".git") + "\n");
    await expect(openHostRepo(second)).rejects.toThrow(/not its own/);

    const third = join(scratch.root, "third");
    mkdirSync(third);
    symlinkSync(join(victim, ".git"), join(third, ".git"));
    await expect(openHostRepo(third)).rejects.toThrow(/not its own \(\.git is a link\)/);

    const fourth = makeRepo(join(scratch.root, "fourth"), { "a.txt": "a\n" });
    const pack =
      git(victim, "repack", "-a", "-d", "-q") === ""
        ? readdirSync(join(victim, ".git", "objects", "pack"))
        : [];
    symlinkSync(
      join(victim, ".git", "objects", "pack", pack[0]!),
      join(fourth, ".git", "objects", "pack", pack[0]!),
    );
    await expect(openHostRepo(fourth)).rejects.toThrow(/is a link/);
  });

  it("opens a linked worktree and a submodule's checkout, whose stores are their repository's own", async () => {
    const { victim } = victimAndAttacker();
    const worktree = join(scratch.root, "wt");
    git(victim, "worktree", "add", "-q", worktree);
    expect((await openHostRepo(worktree)).root).toBe(realpathSync(worktree));
    const sub = makeRepo(join(scratch.root, "sub-origin"), { "s.txt": "s\n" });
    git(victim, "-c", "protocol.file.allow=always", "submodule", "add", "-q", sub, "sub");
    expect((await openHostRepo(join(victim, "sub"))).root).toBe(realpathSync(join(victim, "sub")));
  });
});

describe("what a repository's trees and configuration cannot make drydock do", () => {
  it("refuses at once a commit whose trees name one subtree twice, level after level (2^40 paths from 42 objects)", async () => {
    scratch = new Scratch();
    const repo = makeRepo(join(scratch.root, "repo"), { "a.txt": "a\n" });
    let tree = execFileSync("git", ["mktree"], { cwd: repo, input: "", encoding: "utf8" }).trim();
    for (let i = 0; i < 40; i++) {
      tree = execFileSync("git", ["mktree"], {
        cwd: repo,
        input: `040000 tree ${tree}\ta\n040000 tree ${tree}\tb\n`,
        encoding: "utf8",
      }).trim();
    }
    const commit = git(repo, "commit-tree", tree, "-m", "bomb").trim();
    const started = Date.now();
    await expect(verifiedCommitTree(repo, commit)).rejects.toThrow(/more than 5000000 paths/);
    expect(Date.now() - started).toBeLessThan(10_000);
  });

  it("never fetches a missing object, even through a transport the repository allows by name", async () => {
    scratch = new Scratch();
    const repo = makeRepo(join(scratch.root, "repo"), { "a.txt": "a\n" });
    const mark = join(scratch.root, "fetched");
    git(repo, "config", "extensions.partialClone", "origin");
    git(repo, "config", "remote.origin.url", `ext::sh -c touch% ${mark}`);
    git(repo, "config", "remote.origin.promisor", "true");
    git(repo, "config", "protocol.ext.allow", "always");
    const missing = "0123456789abcdef0123456789abcdef01234567";
    await runHostGit(repo, ["cat-file", "-e", missing], { okExitCodes: [0, 1, 128] });
    await expect(resolveCommit(await openHostRepo(repo), missing)).rejects.toThrow(/names no commit/);
    expect(existsSync(mark)).toBe(false);
  });
});
