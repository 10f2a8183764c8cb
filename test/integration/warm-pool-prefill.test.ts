/**
 * A warm pool that prefills its boxes with the served repository's commit: a session on that
 * repository's working tree gets exactly what a cold start gives (files, modes, links, git's
 * state, the diff), whatever changed since the prefill (edits, deletions, new files, a file that
 * became a directory, new commits, a deleted branch). What another repository's session finds in a
 * prefilled box is tested in test/security/warm-pool-prefill.test.ts.
 */
import { mkdirSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { Session } from "../../src/session/session.js";
import { git, tempRepo, type TempRepo } from "../helpers/repos.js";
import { withPrefilledPool } from "../helpers/prefilled-pool.js";
import { sandboxImage, testSession } from "../helpers/sessions.js";

/** The box's workspace and git state as the agent sees them, for comparing two boxes. */
async function view(session: Session): Promise<string> {
  const script = [
    "cd /workspace",
    // Both indexes' entries, before any git command below refreshes the agent's.
    "git ls-files -v -s",
    "GIT_INDEX_FILE=/tmp/.drydock-index git ls-files -v -s",
    "find . -path ./.git -prune -o -printf '%P %y %m %s %l\\n' | sort",
    "find . -path ./.git -prune -o -type f -print0 | sort -z | xargs -0 -r sha1sum",
    "git status --porcelain=v1 --untracked-files=all",
    // The snapshot commit's id holds the time it was made: its tree and parents say what it is.
    "git log --format='%T %P %s' --all",
    "git branch -a --format='%(refname) %(objectname)'",
    "git symbolic-ref -q HEAD || git rev-parse HEAD",
    "git diff --cached --stat",
  ].join("; echo ---; ");
  return (await session.bash(script)).output;
}

describe("a warm pool prefilled with the served repository", () => {
  const repos: TempRepo[] = [];
  const newRepo = (files: Record<string, string>) => {
    const repo = tempRepo(files);
    repos.push(repo);
    return repo;
  };
  afterEach(() => {
    for (const repo of repos.splice(0)) repo[Symbol.dispose]();
  });

  it("gives a session what a cold start gives, whatever changed on the host since the prefill", async () => {
    const repo = newRepo({
      "README.md": "hello\n",
      "src/a.py": "a = 1\n",
      "src/b.py": "b = 2\n",
      "gone/x.txt": "x\n",
      "becomes-dir": "a file for now\n",
      "run.sh": "#!/bin/sh\necho run\n",
    });
    git(repo.path, "branch", "old-branch");
    await withPrefilledPool(repo.path, async (manager) => {
      // After the prefill: a new commit, a branch deleted, edits, a deletion, a new file, a file
      // replaced by a directory, a mode change, a link, and a staged file.
      repo.write("src/a.py", "a = 10\n");
      repo.commit("second");
      git(repo.path, "branch", "-D", "old-branch");
      repo.write("src/b.py", "b = 20\n");
      rmSync(join(repo.path, "gone"), { recursive: true });
      rmSync(join(repo.path, "becomes-dir"));
      mkdirSync(join(repo.path, "becomes-dir"));
      writeFileSync(join(repo.path, "becomes-dir", "inside.txt"), "inside\n");
      writeFileSync(join(repo.path, "new.txt"), "new\n");
      git(repo.path, "update-index", "--chmod=+x", "src/a.py");
      symlinkSync("src/a.py", join(repo.path, "link-to-a"));
      writeFileSync(join(repo.path, "staged.txt"), "staged\n");
      git(repo.path, "add", "staged.txt");

      const warm = await manager.create({ repo: repo.path, image: sandboxImage() });
      const cold = await testSession(repo.path);
      try {
        expect(warm.warm).toBe(true);
        expect(await view(warm)).toBe(await view(cold));
        expect(warm.baseCommit).not.toBe("");
        // The same edit gives the same diff in both.
        for (const s of [warm, cold]) await s.bash("echo more >> README.md && rm src/b.py");
        expect(await warm.diff()).toBe(await cold.diff());
        expect(await warm.diff()).toContain("+more");
      } finally {
        await cold.destroy();
      }
    });
  });

  it("a clean tree at the prefilled commit: the session sends no working-tree file", async () => {
    const repo = newRepo(Object.fromEntries(Array.from({ length: 200 }, (_, i) => [`f${i}.txt`, `${i}\n`])));
    await withPrefilledPool(repo.path, async (manager) => {
      const warm = await manager.create({ repo: repo.path, image: sandboxImage() });
      const cold = await testSession(repo.path);
      try {
        expect(warm.warm).toBe(true);
        expect((await warm.bash("ls | wc -l; git status --porcelain | wc -l")).output).toBe("200\n0\n");
        expect(await warm.diff()).toBe("");
        expect(warm.dirty).toBe(false);
        expect(warm.baseCommit).toBe(git(repo.path, "rev-parse", "HEAD").trim());
        expect(await view(warm)).toBe(await view(cold));
      } finally {
        await cold.destroy();
      }
    });
  });

  it("edits not staged at the prefilled commit: git looks at those paths alone and sees what a cold start sees", async () => {
    const repo = newRepo({
      "plain.txt": "plain\n",
      "star*.txt": "a name git would read as a pattern\n",
      "[ab].txt": "a class pattern\n",
      "ab.txt": "matched by [ab] as a pattern, never changed\n",
      "b.txt": "also matched by [ab]\n",
      "dir/kept.txt": "kept\n",
      "dir/gone.txt": "gone\n",
      "touched.txt": "same content, new time\n",
    });
    await withPrefilledPool(repo.path, async (manager) => {
      repo.write("star*.txt", "edited\n");
      repo.write("[ab].txt", "edited too\n");
      rmSync(join(repo.path, "dir", "gone.txt"));
      writeFileSync(join(repo.path, "untracked.txt"), "new\n");
      // Left out of every diff by drydock's own excludes, in a cold copy as in a warm one.
      mkdirSync(join(repo.path, "__pycache__"));
      writeFileSync(join(repo.path, "__pycache__", "m.cpython-311.pyc"), "bytecode");
      // Rewritten with the same bytes: the host lists it as changed, git finds it is not.
      repo.write("touched.txt", "same content, new time\n");
      const warm = await manager.create({ repo: repo.path, image: sandboxImage() });
      const cold = await testSession(repo.path);
      try {
        expect(warm.warm).toBe(true);
        expect(warm.dirty).toBe(true);
        expect(await view(warm)).toBe(await view(cold));
        const names = (await warm.bash("git status --porcelain=v1 --untracked-files=all")).output;
        expect(names).toBe(" M [ab].txt\n D dir/gone.txt\n M star*.txt\n?? untracked.txt\n");
        expect(await warm.diff()).toBe(await cold.diff());
        // The host commit of the working state (made beside the copy-in) is a cold start's.
        const tree = (commit: string) => git(repo.path, "rev-parse", `${commit}^{tree}`).trim();
        expect(warm.hostBaseCommit).not.toBe(git(repo.path, "rev-parse", "HEAD").trim());
        expect(tree(warm.hostBaseCommit)).toBe(tree(cold.hostBaseCommit));
      } finally {
        await cold.destroy();
      }
    });
  });

  it("a session named by a subdirectory of the served repository gets the whole working tree", async () => {
    const repo = newRepo({ "top.txt": "top\n", "sub/inner.txt": "inner\n" });
    await withPrefilledPool(repo.path, async (manager) => {
      // Untracked files above and inside the directory named: listed from the directory, git would
      // name the inner one alone, and relative to it.
      writeFileSync(join(repo.path, "untracked-top.txt"), "above\n");
      writeFileSync(join(repo.path, "sub", "untracked-inner.txt"), "inside\n");
      repo.write("top.txt", "top, edited\n");
      const from = join(repo.path, "sub");
      const warm = await manager.create({ repo: from, image: sandboxImage() });
      const cold = await testSession(from);
      try {
        expect(warm.warm).toBe(true);
        const names = (await warm.bash("git status --porcelain=v1 --untracked-files=all")).output;
        expect(names).toBe(" M top.txt\n?? sub/untracked-inner.txt\n?? untracked-top.txt\n");
        expect(await view(warm)).toBe(await view(cold));
      } finally {
        await cold.destroy();
      }
    });
  });

  it("a host index once found to list the prefilled commit is not sent again; one staged or flagged since is, and checked", async () => {
    const repo = newRepo({ "a.txt": "a\n", "b.txt": "b\n", "dir/c.txt": "c\n" });
    await withPrefilledPool(repo.path, async (manager) => {
      // The agent's index in a warm box, and when it was written: before the session was asked
      // for, it is the one the prefill made (the host sent none).
      const next = async () => {
        await manager.pool!.full();
        await new Promise((resolve) => setTimeout(resolve, 1500));
        const asked = Date.now() / 1000;
        const warm = await manager.create({ repo: repo.path, image: sandboxImage() });
        expect(warm.warm).toBe(true);
        const written = Number((await warm.bash("stat -c %.3Y /workspace/.git/index")).output);
        const cold = await testSession(repo.path);
        try {
          expect(await view(warm)).toBe(await view(cold));
          await warm.bash("echo more >> a.txt");
          await cold.bash("echo more >> a.txt");
          expect(await warm.diff()).toBe(await cold.diff());
        } finally {
          await cold.destroy();
          await manager.destroy(warm.id);
        }
        return written < asked - 0.5 ? "kept" : "sent";
      };
      // The first start learns that the host's index lists the commit; the next sends none.
      expect(await next()).toBe("sent");
      expect(await next()).toBe("kept");
      // Staged since: other bytes, sent, and the box finds they list another tree.
      repo.write("b.txt", "b, staged\n");
      git(repo.path, "add", "b.txt");
      expect(await next()).toBe("sent");
      // The same entries with a flag (skip-worktree): other bytes again, sent, and not the prefill's.
      git(repo.path, "reset", "-q", "b.txt");
      git(repo.path, "update-index", "--skip-worktree", "dir/c.txt");
      expect(await next()).toBe("sent");
    });
  });
});
