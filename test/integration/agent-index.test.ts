import { describe, expect, it } from "vitest";
import { git, tempRepo } from "../helpers/repos.js";
import { testSession } from "../helpers/sessions.js";

/** path → inode, as the index records it (`git ls-files --debug`). */
function indexInodes(debug: string): Map<string, string> {
  const inodes = new Map<string, string>();
  let path = "";
  for (const line of debug.split("\n")) {
    if (!line.startsWith(" ")) path = line;
    const ino = /\bino: (\d+)/.exec(line);
    if (ino) inodes.set(path, ino[1]!);
  }
  return inodes;
}

/** Files enough for an index over 64 KiB: copy-in rebuilds such an index instead of hashing its files. */
const FILLER: Record<string, string> = Object.fromEntries(
  Array.from({ length: 900 }, (_, i) => [`fill/some-longer-directory/file-${i}.txt`, `${i}\n`]),
);

/** Few files over more than 8 MiB: a refresh would hash them all, so copy-in rebuilds this index too. */
const LARGE_FILES: Record<string, string> = Object.fromEntries(
  Array.from({ length: 3 }, (_, i) => [`data/blob-${i}.txt`, `${i}`.repeat(3 * 1024 * 1024)]),
);

describe.each([
  ["a small index (refreshed by hashing)", {}, (bytes: number) => expect(bytes).toBeLessThan(63 * 1024)],
  [
    "a small index over 9 MiB of files (rebuilt from the box's own)",
    LARGE_FILES,
    (bytes: number) => expect(bytes).toBeLessThan(63 * 1024),
  ],
  [
    "an index over 64 KiB (rebuilt from the box's own)",
    FILLER,
    (bytes: number) => expect(bytes).toBeGreaterThan(64 * 1024),
  ],
] as const)("the agent's git index after copy-in, %s", (_label, filler, sized) => {
  it("carries this box's stat data, with the host's staged and unstaged changes as they were", async () => {
    using repo = tempRepo({ ...filler, "a.txt": "a\n", "b.txt": "b\n", "c.txt": "c\n", "d/e.txt": "e\n" });
    repo.write("a.txt", "a staged\n");
    git(repo.path, "add", "a.txt");
    repo.write("b.txt", "b unstaged\n");
    repo.write("new.txt", "untracked\n");
    const hostStatus = git(repo.path, "status", "--porcelain");
    await using session = await testSession(repo.path);
    sized(Number((await session.bash("stat -c %s .git/index")).output.trim()));

    const listing = await session.bash(
      "git ls-files --debug; echo ---; stat -c '%n %i' a.txt c.txt d/e.txt",
      {
        maxOutputBytes: 1_000_000,
      },
    );
    const [debug = "", stats = ""] = listing.output.split("---\n");
    const recorded = indexInodes(debug);
    for (const line of stats.trim().split("\n")) {
      const [path, ino] = line.split(" ");
      // Without fresh stat data, git hashes every file on each diff until something rewrites it.
      expect(recorded.get(path!), path).toBe(ino);
    }
    // Nothing in the box has rewritten the index yet: what status shows is what copy-in wrote.
    expect((await session.bash("git status --porcelain")).output).toBe(hostStatus);
    expect((await session.bash("git diff --cached --name-only")).output).toBe("a.txt\n");
  });

  it("keeps assume-unchanged, skip-worktree and intent-to-add entries as the host has them", async () => {
    using repo = tempRepo({ ...filler, "a.txt": "a\n", "b.txt": "b\n", "c.txt": "c\n" });
    git(repo.path, "update-index", "--assume-unchanged", "a.txt");
    git(repo.path, "update-index", "--skip-worktree", "b.txt");
    repo.write("later.txt", "intent\n");
    git(repo.path, "add", "-N", "later.txt");
    const hostFlags = git(repo.path, "ls-files", "-v", "-s");
    const hostStatus = git(repo.path, "status", "--porcelain");
    await using session = await testSession(repo.path);
    sized(Number((await session.bash("stat -c %s .git/index")).output.trim()));

    expect((await session.bash("git ls-files -v -s", { maxOutputBytes: 1_000_000 })).output).toBe(hostFlags);
    expect((await session.bash("git status --porcelain")).output).toBe(hostStatus);
  });
});
