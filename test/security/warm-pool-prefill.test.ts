/**
 * A warm pool prefilled with the served repository, attacked from the other side: a session on
 * another repository (or on a ref) must find nothing of the prefilled one, and paths a repository
 * chose to delete (option-like names, newlines, spaces) are removed as names, never as options.
 * Runs under runc and gVisor.
 */
import { mkdirSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { Session } from "../../src/session/session.js";
import { git, tempRepo, type TempRepo } from "../helpers/repos.js";
import { withPrefilledPool } from "../helpers/prefilled-pool.js";
import { sandboxImage, testSession } from "../helpers/sessions.js";

async function view(session: Session): Promise<string> {
  const script = [
    "cd /workspace",
    "find . -path ./.git -prune -o -printf '%P %y %m %s\\n' | sort",
    "git status --porcelain=v1 --untracked-files=all",
    "git log --format='%T %P %s' --all",
  ].join("; echo ---; ");
  return (await session.bash(script)).output;
}

describe("a prefilled warm box", () => {
  const repos: TempRepo[] = [];
  const newRepo = (files: Record<string, string>) => {
    const repo = tempRepo(files);
    repos.push(repo);
    return repo;
  };
  afterEach(() => {
    for (const repo of repos.splice(0)) repo[Symbol.dispose]();
  });

  it("empties the box first for another repository or a ref: nothing of the prefilled one is left", async () => {
    const served = newRepo({ "SECRET-OF-A.txt": "only in A\n", "shared.txt": "A\n" });
    served.write("later.txt", "later\n");
    const ref = served.commit("second");
    const other = newRepo({ "shared.txt": "B\n" });
    await withPrefilledPool(served.path, async (manager) => {
      const b = await manager.create({ repo: other.path, image: sandboxImage() });
      expect(b.warm).toBe(true);
      expect(
        (await b.bash("ls -A1 /workspace; git log --all --format=%s; ls /tmp/.drydock-prefilled 2>&1"))
          .output,
      ).toMatch(
        /^\.git\nshared\.txt\ninitial\nls: cannot access '\/tmp\/\.drydock-prefilled': No such file or directory\n$/,
      );
      expect((await b.bash("grep -rl 'only in A' /workspace /tmp 2>/dev/null | wc -l")).output).toBe("0\n");
      // Not even its file names (the prefill's listing of its index).
      expect((await b.bash("grep -rl 'SECRET-OF-A' /workspace /tmp 2>/dev/null | wc -l")).output).toBe("0\n");
      expect((await b.bash("git cat-file -e $(git -C /workspace rev-parse HEAD) && echo ok")).output).toBe(
        "ok\n",
      );

      await manager.pool!.full();
      // The commit before: a client's ref is a commit id, not revision syntax.
      const before = git(served.path, "rev-parse", `${ref}~1`).trim();
      const onRef = await manager.create({ repo: served.path, ref: before, image: sandboxImage() });
      expect(onRef.warm).toBe(true);
      const cold = await testSession(served.path, { ref: before });
      try {
        expect(await view(onRef)).toBe(await view(cold));
        expect((await onRef.bash("ls")).output).not.toContain("later.txt");
      } finally {
        await cold.destroy();
      }
    });
  });

  it("reads HEAD as git does: detached, packed, through a link, or through a ref that is a link", async () => {
    const repo = newRepo({ "a.txt": "a\n" });
    const commit = git(repo.path, "rev-parse", "HEAD").trim();
    // What the host's git says of HEAD and the tree, to be the box's too.
    const hostView = () =>
      [
        git(repo.path, "rev-parse", "HEAD").trim(),
        git(repo.path, "rev-parse", "--symbolic-full-name", "HEAD").trim(),
        git(repo.path, "status", "--porcelain"),
      ].join("|");
    const boxView = async (session: Session) =>
      (
        await session.bash(
          'cd /workspace && printf \'%s|%s|%s\' "$(git rev-parse HEAD)" "$(git rev-parse --symbolic-full-name HEAD)" "$(git status --porcelain)"',
        )
      ).output;
    const cases: Array<[string, () => void]> = [
      ["detached at the prefilled commit", () => git(repo.path, "checkout", "-q", "--detach")],
      [
        "the branch only in packed-refs",
        () => {
          git(repo.path, "checkout", "-q", "main");
          git(repo.path, "pack-refs", "--all");
        },
      ],
      [
        "HEAD a link to the branch, as git once wrote it",
        () => {
          rmSync(join(repo.path, ".git", "HEAD"));
          symlinkSync("refs/heads/main", join(repo.path, ".git", "HEAD"));
        },
      ],
      [
        "the branch's ref a link to a file holding the commit",
        () => {
          rmSync(join(repo.path, ".git", "HEAD"));
          writeFileSync(join(repo.path, ".git", "HEAD"), "ref: refs/heads/main\n");
          writeFileSync(join(repo.path, ".git", "commit-id"), `${commit}\n`);
          symlinkSync("../../commit-id", join(repo.path, ".git", "refs", "heads", "main"));
        },
      ],
    ];
    await withPrefilledPool(repo.path, async (manager) => {
      for (const [what, change] of cases) {
        change();
        // The next box holds the same commit: the start sends what changed in .git, and the box
        // reads HEAD from it.
        await manager.pool!.full();
        const warm = await manager.create({ repo: repo.path, image: sandboxImage() });
        try {
          expect(warm.warm, what).toBe(true);
          expect(warm.baseCommit, what).toBe(commit);
          expect(await boxView(warm), what).toBe(hostView());
          expect(await warm.diff(), what).toBe("");
        } finally {
          await manager.destroy(warm.id);
        }
      }
    });
  });

  it("deletes what the repository deleted by name: option-like names, newlines and spaces, nothing else", async () => {
    const repo = newRepo({
      "-rf": "option-like\n",
      "--no-preserve-root": "option-like\n",
      "dir with space/a b.txt": "space\n",
      "line\nbreak/x.txt": "newline\n",
      "keep.txt": "keep\n",
      "nested/deep/file.txt": "deep\n",
    });
    await withPrefilledPool(repo.path, async (manager) => {
      for (const path of ["-rf", "--no-preserve-root", "dir with space", "line\nbreak", "nested/deep"]) {
        rmSync(join(repo.path, path), { recursive: true });
      }
      mkdirSync(join(repo.path, "-rf"));
      writeFileSync(join(repo.path, "-rf", "now-a-dir.txt"), "dir\n");
      const warm = await manager.create({ repo: repo.path, image: sandboxImage() });
      const cold = await testSession(repo.path);
      try {
        expect(warm.warm).toBe(true);
        expect(await view(warm)).toBe(await view(cold));
        expect(
          (await warm.bash("cat keep.txt; ls -d /workspace /home/agent /tmp >/dev/null && echo intact"))
            .output,
        ).toBe("keep\nintact\n");
      } finally {
        await cold.destroy();
      }
    });
  });
});
