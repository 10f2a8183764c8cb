import { execFileSync } from "node:child_process";
import { existsSync, readFileSync, rmSync, unlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { git, symlink, tempRepo } from "../helpers/repos.js";
import { testSession } from "../helpers/sessions.js";

const binary = Buffer.from([0, 1, 2, 3, 255, 254, 0, 10, 13, 0]);

function repoWithEverything() {
  const repo = tempRepo({
    ".gitignore": "node_modules/\n*.log\n",
    "src/main.py": "print('hi')\n",
    "gone.txt": "to be deleted\n",
    "bin.dat": binary,
    "keep.txt": "keep\n",
  });
  symlink(repo, "keep.txt", "link-to-keep");
  repo.commit("with link");
  // Uncommitted edits, an untracked file, an ignored dir, a deleted file, a name with spaces and unicode.
  repo.write("src/main.py", "print('hi')\nprint('uncommitted')\n");
  repo.write("untracked.txt", "new on the host\n");
  repo.write("node_modules/big/index.js", "module.exports = 1\n");
  repo.write("debug.log", "noise\n");
  repo.write("dir with space/ünï cødé.txt", "unicode\n");
  unlinkSync(join(repo.path, "gone.txt"));
  return repo;
}

describe("workspace in and out", () => {
  it("copies HEAD plus uncommitted and untracked files, without ignored ones, and the diff starts empty", async () => {
    using repo = repoWithEverything();
    await using session = await testSession(repo.path);
    const ls = (await session.bash("find . -path ./.git -prune -o -print | sort")).output.split("\n");
    expect(ls).toContain("./untracked.txt");
    expect(ls).toContain("./dir with space/ünï cødé.txt");
    expect(ls).toContain("./link-to-keep");
    expect(ls).not.toContain("./node_modules");
    expect(ls).not.toContain("./debug.log");
    expect(ls).not.toContain("./gone.txt");
    expect((await session.bash("cat src/main.py")).output).toBe("print('hi')\nprint('uncommitted')\n");
    expect((await session.bash("readlink link-to-keep")).output).toBe("keep.txt\n");
    expect((await session.bash("od -An -tx1 bin.dat | tr -d ' \\n'")).output).toBe(binary.toString("hex"));
    expect((await session.bash("git log --oneline | wc -l")).output.trim()).toBe("2");
    expect((await session.bash("git config --get remote.origin.url; echo rc=$?")).output).toBe("rc=1\n");
    expect(await session.diff()).toBe("");
    // drydock's own temporary files (a file tool's write in flight) are never part of a diff.
    await session.bash("touch .drydock-write-AbC123 src/.drydock-write-x");
    expect(await session.diff()).toBe("");
  });

  it("a clean checkout whose files are named like revisions has HEAD as its base, not a snapshot", async () => {
    // The receiver asks git for HEAD and its tree by name, with files of those names beside them.
    using repo = tempRepo({ HEAD: "a file named HEAD\n", "--": "dashes\n", "HEAD^{tree}": "braces\n" });
    await using session = await testSession(repo.path);
    expect(session.dirty).toBe(false);
    expect(session.baseCommit).toBe(git(repo.path, "rev-parse", "HEAD").trim());
    expect((await session.bash("git status --porcelain")).output).toBe("");
    expect(await session.diff()).toBe("");
  });

  it("a repository that borrows its objects from another (a --shared clone) is refused with the fix, and starts once repacked and on its own", async () => {
    using origin = tempRepo({ "a.txt": "a\n" });
    using clone = tempRepo();
    rmSync(clone.path, { recursive: true, force: true });
    git(origin.path, "clone", "-q", "--shared", origin.path, clone.path);
    await expect(testSession(clone.path)).rejects.toThrow(
      /borrows objects from outside itself.*git repack -a -d.*objects\/info\/alternates/s,
    );
    git(clone.path, "repack", "-a", "-d", "-q");
    // Repacked, it holds every object it needs, but git would still look in the other store for
    // any it lacks: drydock reads objects only from a repository that names no other store.
    await expect(testSession(clone.path)).rejects.toThrow(/borrows objects from outside itself/);
    rmSync(join(clone.path, ".git", "objects", "info", "alternates"));
    await using session = await testSession(clone.path);
    expect(session.dirty).toBe(false);
    expect((await session.bash("cat a.txt; git status --porcelain")).output).toBe("a\n");
  });

  it("takes out an exact diff of edits in the box and applies it to a branch, leaving the working tree as it was", async () => {
    using repo = repoWithEverything();
    await using session = await testSession(repo.path);
    await session.bash(
      [
        "echo more >> keep.txt",
        "rm untracked.txt",
        "printf '\\x00\\xff new binary' > new.bin",
        "git mv src/main.py src/app.py",
        "chmod +x src/app.py",
        "git commit -qm 'a commit in the box' || true",
        "echo after-commit >> 'dir with space/ünï cødé.txt'",
      ].join(" && "),
    );
    const diff = await session.diff();
    expect(diff).toContain("rename from src/main.py");
    expect(diff).toContain("new mode 100755");
    expect(diff).toContain("deleted file mode 100644");
    expect(diff).toContain("GIT binary patch");
    expect(diff).toMatch(/\+after-commit/);

    const statusBefore = git(repo.path, "status", "--porcelain");
    const headBefore = git(repo.path, "rev-parse", "HEAD");
    // The box deleted and edited files the host never committed: only a branch on the snapshot of
    // the uncommitted work holds that change (without it, the apply names them and changes nothing).
    await expect(session.apply({ branch: "drydock/exact" })).rejects.toThrow(/untracked\.txt|ünï|main\.py/);
    const applied = await session.apply({ branch: "drydock/exact", includeUncommitted: true });
    expect(applied.branch).toBe("drydock/exact");
    expect(git(repo.path, "status", "--porcelain")).toBe(statusBefore);
    expect(git(repo.path, "rev-parse", "HEAD")).toBe(headBefore);

    // The branch holds exactly the box's tree: check it out elsewhere and compare with the box.
    const checkout = join(repo.path, "..", `${repo.path.split("/").pop()}-check`);
    execFileSync("git", ["worktree", "add", "-q", checkout, "drydock/exact"], { cwd: repo.path });
    try {
      expect(readFileSync(join(checkout, "keep.txt"), "utf8")).toBe("keep\nmore\n");
      expect(existsSync(join(checkout, "untracked.txt"))).toBe(false);
      expect(existsSync(join(checkout, "src/app.py"))).toBe(true);
      expect(readFileSync(join(checkout, "src/app.py"), "utf8")).toContain("uncommitted");
      expect(readFileSync(join(checkout, "new.bin"))).toEqual(Buffer.from("\x00\xff new binary", "latin1"));
      expect(readFileSync(join(checkout, "dir with space/ünï cødé.txt"), "utf8")).toBe(
        "unicode\nafter-commit\n",
      );
    } finally {
      execFileSync("git", ["worktree", "remove", "--force", checkout], { cwd: repo.path });
      rmSync(checkout, { recursive: true, force: true });
    }
  });

  it("refuses a conflicting worktree apply and changes nothing on the host", async () => {
    using repo = tempRepo({ "a.txt": "one\ntwo\nthree\n" });
    await using session = await testSession(repo.path);
    await session.bash("sed -i s/two/TWO/ a.txt");
    writeFileSync(join(repo.path, "a.txt"), "one\nzwei\nthree\n");
    const before = readFileSync(join(repo.path, "a.txt"), "utf8");
    await expect(session.apply({ mode: "worktree" })).rejects.toThrow(/a\.txt/);
    expect(readFileSync(join(repo.path, "a.txt"), "utf8")).toBe(before);
  });

  it("starts from a given ref", async () => {
    using repo = tempRepo({ "v.txt": "1\n" });
    const first = git(repo.path, "rev-parse", "HEAD").trim();
    repo.write("v.txt", "2\n");
    repo.commit("second");
    await using session = await testSession(repo.path, { ref: first });
    expect((await session.bash("cat v.txt")).output).toBe("1\n");
    expect(session.baseCommit).toBe(first);
    await expect(testSession(repo.path, { ref: "no-such-ref" })).rejects.toThrow(/ref/);
  });
});
