import { existsSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { applyDiff } from "../../../src/workspace/apply-diff.js";
import { ApplyConflictError, InvalidArgumentError, UnsafeDiffError } from "../../../src/util/errors.js";
import { addFile } from "./diff-builders.js";
import {
  boxDiff,
  boxTree,
  cloneBox,
  git,
  hostState,
  isolateGitConfig,
  makeRepo,
  Scratch,
  writeFiles,
  type Entry,
} from "./host-repo-fixture.js";

beforeAll(isolateGitConfig);

const LINES = Array.from({ length: 30 }, (_, i) => `export const v${i} = ${i};`).join("\n") + "\n";
const BASE: Record<string, Entry> = {
  "README.md": "hello\n",
  "src/old-name.ts": LINES,
  "doomed.txt": "bye\n",
  "script.sh": "#!/bin/sh\necho hi\n",
  "assets/logo.bin": Buffer.from(Array.from({ length: 4096 }, (_, i) => (i * 7) % 256)),
  "docs/readme-link": { symlink: "../README.md" },
  "crlf.txt": "a\r\nb\r\n",
  "latin1.txt": Buffer.from("caf\xe9\n", "latin1"),
};

/** The changes an agent makes in the box: every kind of file change git can express. */
function editInBox(box: string): void {
  git(box, "mv", "src/old-name.ts", "src/new-name.ts");
  git(box, "rm", "-q", "doomed.txt");
  writeFiles(box, {
    "README.md": "hello from the box\n",
    "src/new-name.ts": LINES.replace("v7 = 7", "v7 = 70"),
    "script.sh": { exec: "#!/bin/sh\necho hi\n" },
    "assets/logo.bin": Buffer.from(Array.from({ length: 4096 }, (_, i) => (i * 11) % 256)),
    "assets/new.bin": Buffer.from([0, 0, 0, 1, 0xff, 0x00, 0x7f]),
    "new dir/ä b.txt": "unicode and a space\n",
    'say "hi".txt': "quoted name\n",
    "empty.txt": "",
    "crlf.txt": "a\r\nb\r\nc\r\n",
    "latin1.txt": Buffer.from("caf\xe9 cr\xe8me\n", "latin1"),
  });
}

describe("applyDiff", () => {
  let scratch: Scratch;
  afterEach(() => scratch.dispose());

  function setup(files: Record<string, Entry> = BASE, edit: (box: string) => void = editInBox) {
    scratch = new Scratch();
    const host = makeRepo(join(scratch.root, "repo"), files);
    const box = cloneBox(host, join(scratch.root, "box"));
    edit(box);
    return { host, box, diff: boxDiff(box), base: git(host, "rev-parse", "HEAD").trim() };
  }

  it("commits every kind of change on a new branch, exactly as the box has it", async () => {
    const { host, box, diff, base } = setup();
    const before = hostState(host);
    const result = await applyDiff(host, diff, {
      branch: "drydock/s1",
      baseCommit: base,
      message: "Session s1",
    });

    expect(hostState(host)).toEqual({ ...before, refs: expect.any(String) });
    expect(git(host, "rev-parse", "drydock/s1^{tree}").trim()).toBe(boxTree(box));
    expect(git(host, "rev-parse", "drydock/s1^").trim()).toBe(base);
    expect(git(host, "log", "-1", "--format=%an <%ae>|%s", "drydock/s1").trim()).toBe(
      "Host User <host@example.com>|Session s1",
    );
    expect(result).toMatchObject({ mode: "branch", branch: "drydock/s1", baseCommit: base });
    expect(result.commit).toBe(git(host, "rev-parse", "drydock/s1").trim());
    expect(result.files).toEqual(
      expect.arrayContaining([
        { path: "src/new-name.ts", status: "renamed", oldPath: "src/old-name.ts" },
        { path: "doomed.txt", status: "deleted" },
        { path: "script.sh", status: "modified" },
        { path: "new dir/ä b.txt", status: "added" },
        { path: "assets/new.bin", status: "added" },
      ]),
    );
    expect(result.stat.filesChanged).toBe(result.files.length);
    expect(result.stat.insertions).toBeGreaterThan(0);
  });

  it("leaves uncommitted work on the host untouched in branch mode", async () => {
    const { host, diff, base } = setup();
    writeFiles(host, { "README.md": "my own unsaved edit\n", "notes.txt": "untracked\n" });
    git(host, "add", "notes.txt");
    writeFiles(host, { "scratch.txt": "not staged\n" });
    const before = hostState(host);
    await applyDiff(host, diff, { branch: "drydock/s2", baseCommit: base });
    expect(hostState(host)).toEqual({ ...before, refs: expect.any(String) });
    expect(git(host, "show", "drydock/s2:README.md")).toBe("hello from the box\n");
  });

  it("applies every kind of change to the working tree in worktree mode", async () => {
    const { host, box, diff } = setup();
    const before = hostState(host);
    const result = await applyDiff(host, diff, { mode: "worktree" });
    expect(result.mode).toBe("worktree");
    expect(result.branch).toBeUndefined();
    const after = hostState(host);
    expect([after.head, after.refs, after.index]).toEqual([before.head, before.refs, before.index]);
    const files = (state: Record<string, string>) =>
      Object.fromEntries(Object.entries(state).filter(([key]) => key.startsWith("file:")));
    expect(files(after)).toEqual(files(hostState(box)));
  });

  it("changes nothing and names the file when the working tree conflicts", async () => {
    const { host, diff } = setup();
    writeFiles(host, { "README.md": "edited on the host meanwhile\n" });
    const before = hostState(host);
    const error = await applyDiff(host, diff, { mode: "worktree" }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ApplyConflictError);
    expect((error as ApplyConflictError).files).toEqual(["README.md"]);
    expect((error as Error).message).toMatch(/README\.md.*nothing on the host was changed/);
    expect(hostState(host)).toEqual(before);
  });

  it("changes nothing and creates no branch when the base does not match", async () => {
    const { host, diff } = setup();
    writeFiles(host, { "README.md": "committed on the host meanwhile\n" });
    git(host, "commit", "-q", "-am", "host moved on");
    const before = hostState(host);
    const moved = git(host, "rev-parse", "HEAD").trim();
    const error = await applyDiff(host, diff, { branch: "drydock/s3", baseCommit: moved }).catch(
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(ApplyConflictError);
    expect((error as ApplyConflictError).files).toContain("README.md");
    expect(hostState(host)).toEqual(before);
  });

  it("refuses a branch that exists, and moves it only when told to", async () => {
    const { host, diff, base } = setup();
    git(host, "branch", "drydock/s4");
    const before = hostState(host);
    const error = await applyDiff(host, diff, { branch: "drydock/s4", baseCommit: base }).catch(
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(InvalidArgumentError);
    expect((error as Error).message).toMatch(/drydock\/s4 already exists.*replaceBranch/);
    expect(hostState(host)).toEqual(before);
    const moved = await applyDiff(host, diff, {
      branch: "drydock/s4",
      baseCommit: base,
      replaceBranch: true,
    });
    expect(git(host, "rev-parse", "drydock/s4").trim()).toBe(moved.commit);
  });

  it("says why when git cannot create the branch", async () => {
    const { host, diff, base } = setup();
    git(host, "branch", "drydock");
    const before = hostState(host);
    await expect(applyDiff(host, diff, { branch: "drydock/new", baseCommit: base })).rejects.toThrow(
      /^branch: cannot create drydock\/new.*'refs\/heads\/drydock' exists/,
    );
    expect(hostState(host)).toEqual(before);
  });

  it("names the field when branch or base is missing or wrong", async () => {
    const { host, diff, base } = setup();
    await expect(applyDiff(host, diff, { baseCommit: base })).rejects.toThrow(/^branch: is required/);
    await expect(applyDiff(host, diff, { branch: "drydock/x" })).rejects.toThrow(/^baseCommit: is required/);
    await expect(applyDiff(host, diff, { branch: "bad..name", baseCommit: base })).rejects.toThrow(
      /not a valid branch name/,
    );
    await expect(applyDiff(host, diff, { branch: "drydock/x", baseCommit: "f".repeat(40) })).rejects.toThrow(
      /snapshotCommit/,
    );
    await expect(
      applyDiff(join(scratch.root, "nowhere"), diff, { branch: "x", baseCommit: base }),
    ).rejects.toThrow(/^repoPath:/);
  });

  it("commits as drydock when the repository has no identity", async () => {
    const { host, diff, base } = setup();
    git(host, "config", "--unset", "user.name");
    git(host, "config", "--unset", "user.email");
    await applyDiff(host, diff, { branch: "drydock/s5", baseCommit: base });
    expect(git(host, "log", "-1", "--format=%an <%ae>|%cn <%ce>", "drydock/s5").trim()).toBe(
      "drydock <drydock@localhost>|drydock <drydock@localhost>",
    );
  });

  it("runs none of the repository's hooks", async () => {
    const { host, diff, base } = setup();
    const marker = join(scratch.root, "hook-ran");
    for (const hook of ["reference-transaction", "post-index-change", "post-commit"]) {
      writeFileSync(join(host, ".git", "hooks", hook), `#!/bin/sh\necho ${hook} >> "${marker}"\n`, {
        mode: 0o755,
      });
    }
    git(host, "update-ref", "refs/heads/proof-hooks-work", "HEAD");
    expect(existsSync(marker)).toBe(true);
    rmSync(marker);
    await applyDiff(host, diff, { branch: "drydock/s6", baseCommit: base });
    await applyDiff(host, diff, { mode: "worktree" });
    expect(existsSync(marker)).toBe(false);
  });

  it("keeps symlinks the diff does not touch and lets it delete one", async () => {
    const { host, box, diff, base } = setup(BASE, (b) => git(b, "rm", "-q", "docs/readme-link"));
    await applyDiff(host, diff, { branch: "drydock/s7", baseCommit: base });
    expect(git(host, "rev-parse", "drydock/s7^{tree}").trim()).toBe(boxTree(box));
    const kept = setup(BASE, (b) => writeFiles(b, { "README.md": "changed\n" }));
    await applyDiff(kept.host, kept.diff, { mode: "worktree" });
    expect(git(kept.host, "ls-files", "-s", "docs/readme-link")).toMatch(/^120000 /);
  });

  it("creates in-repository symlinks only with allowSymlinks", async () => {
    const { host, box, diff, base } = setup(BASE, (b) =>
      writeFiles(b, { "docs/guide": { symlink: "../README.md" } }),
    );
    const before = hostState(host);
    await expect(applyDiff(host, diff, { branch: "drydock/s8", baseCommit: base })).rejects.toThrow(
      /symlinks from a box are refused/,
    );
    expect(hostState(host)).toEqual(before);
    await applyDiff(host, diff, { branch: "drydock/s8", baseCommit: base, allowSymlinks: true });
    expect(git(host, "rev-parse", "drydock/s8^{tree}").trim()).toBe(boxTree(box));
  });

  it("refuses a renamed symlink whose mode the diff leaves out", async () => {
    const { host, diff, base } = setup(BASE, (b) => git(b, "mv", "docs/readme-link", "docs/moved-link"));
    expect(diff.toString()).not.toMatch(/120000/);
    await expect(applyDiff(host, diff, { branch: "drydock/s9", baseCommit: base })).rejects.toThrow(
      /symlink "docs\/moved-link"/,
    );
  });
});

describe("applyDiff against a hostile diff", () => {
  let scratch: Scratch;
  afterEach(() => scratch.dispose());

  function host(files: Record<string, Entry> = BASE) {
    scratch = new Scratch();
    const repo = makeRepo(join(scratch.root, "repo"), files);
    return { repo, base: git(repo, "rev-parse", "HEAD").trim() };
  }

  async function expectRefusedUntouched(
    repo: string,
    base: string,
    diff: string,
    pattern: RegExp,
  ): Promise<void> {
    const before = hostState(repo);
    const hooksBefore = readdirSync(join(repo, ".git", "hooks")).sort();
    for (const options of [{ branch: "drydock/evil", baseCommit: base }, { mode: "worktree" as const }]) {
      const error = await applyDiff(repo, diff, options).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(UnsafeDiffError);
      expect((error as Error).message).toMatch(pattern);
    }
    expect(hostState(repo)).toEqual(before);
    expect(readdirSync(join(repo, ".git", "hooks")).sort()).toEqual(hooksBefore);
  }

  it("refuses a hook written into .git", async () => {
    const { repo, base } = host();
    await expectRefusedUntouched(
      repo,
      base,
      addFile(".git/hooks/pre-commit", "#!/bin/sh\ntouch /tmp/pwned"),
      /\.git/,
    );
    await expectRefusedUntouched(
      repo,
      base,
      addFile("sub/.git/config", "[core]\n\tfsmonitor = touch /tmp/pwned"),
      /\.git/,
    );
  });

  it("refuses absolute and parent paths", async () => {
    const { repo, base } = host();
    await expectRefusedUntouched(repo, base, addFile("/tmp/drydock-abs-test"), /absolute/);
    await expectRefusedUntouched(repo, base, addFile("../escaped.txt"), /could leave the repository/);
    expect(existsSync(join(scratch.root, "escaped.txt"))).toBe(false);
  });

  it("refuses a symlink to a sibling directory and a write through it", async () => {
    const { repo, base } = host();
    const sibling = join(scratch.root, "repo-sibling");
    writeFiles(sibling, { "keep.txt": "sibling\n" });
    const diff = addFile("link", "../repo-sibling", "120000") + addFile("link/pwned.txt", "pwned");
    await expectRefusedUntouched(repo, base, diff, /through the symlink "link"/);
    expect(readdirSync(sibling)).toEqual(["keep.txt"]);
  });

  it("refuses a write through a symlink the repository already has", async () => {
    const { repo, base } = host({ ...BASE, out: { symlink: "../repo-sibling" } });
    const sibling = join(scratch.root, "repo-sibling");
    writeFiles(sibling, { "keep.txt": "sibling\n" });
    await expectRefusedUntouched(repo, base, addFile("out/pwned.txt", "pwned"), /through the symlink "out"/);
    expect(readdirSync(sibling)).toEqual(["keep.txt"]);
  });

  it("refuses a gitlink and a diff over the cap", async () => {
    const { repo, base } = host();
    await expectRefusedUntouched(
      repo,
      base,
      addFile("vendor", `Subproject commit ${"a".repeat(40)}`, "160000"),
      /submodule/,
    );
    const before = hostState(repo);
    await expect(
      applyDiff(repo, addFile("big.txt", "x".repeat(5000)), { mode: "worktree", maxBytes: 4096 }),
    ).rejects.toThrow(/over the 0\.0 MB cap.*maxBytes/);
    expect(hostState(repo)).toEqual(before);
  });
});
