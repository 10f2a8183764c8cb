/**
 * A fork that lands on a warm box prefilled with the repository starts from the prefilled commit
 * and has only what differs written: it must end exactly where a fork on a cold box does (files,
 * modes, links, git's status, log, branches, HEAD, the shell's directory and exported variables,
 * the diff), with nothing of the prefill left that the source does not have, even when the host
 * moved on after the prefill (a new commit, a deletion, an uncommitted edit). Runs under runc and
 * gVisor.
 */
import { chmodSync, mkdirSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { Session } from "../../src/session/session.js";
import { forkSession } from "../../src/session/session-fork.js";
import { git, tempRepo, type TempRepo } from "../helpers/repos.js";
import { withPrefilledPool } from "../helpers/prefilled-pool.js";
import { testEngine } from "../helpers/sessions.js";

/** Everything of a box a fork must carry, as text to compare. */
async function view(session: Session): Promise<string> {
  const script = [
    "cd /workspace",
    "find . -path ./.git -prune -o -printf '%P %y %m %s %l\\n' | sort",
    "find . -path ./.git -prune -o -type f -print0 | sort -z | xargs -0 -r sha1sum",
    "git status --porcelain=v1 --untracked-files=all --branch",
    "git log --format='%H %T %P %s' --exclude='refs/drydock/*' --all",
    // The checkpoints: a fork's commit of one holds the index as a delta, the rest is the same.
    "for k in $(git for-each-ref --format='%(objectname)' refs/drydock/checkpoints); do git rev-parse $k:w $k:h $k:r $k^; done",
    "git for-each-ref --format='%(refname) %(objectname)' refs/heads refs/tags refs/stash",
    "git symbolic-ref -q HEAD || git rev-parse HEAD",
    "git diff --cached --stat",
    "git ls-files -s | sha1sum",
    "git ls-files -v | sha1sum",
    'cd - >/dev/null; pwd; echo "$FORK_VAR"',
  ].join("; echo ---; ");
  return (await session.bash(script)).output;
}

describe("a fork on a prefilled warm box", () => {
  const repos: TempRepo[] = [];
  afterEach(() => {
    for (const repo of repos.splice(0)) repo[Symbol.dispose]();
  });

  it("of another repository finds nothing of the prefilled one", async () => {
    const served = tempRepo({ "SECRET-OF-A.txt": "only in A\n", "shared.txt": "A\n" });
    const other = tempRepo({ "shared.txt": "B\n" });
    repos.push(served, other);
    const engine = await testEngine();
    await withPrefilledPool(served.path, async (manager) => {
      const source = await Session.create(engine, { repo: other.path, image: manager.pool!.profile.image });
      try {
        await source.bash("echo changed >> shared.txt");
        const [fork] = await forkSession(
          source,
          { n: 1 },
          (options) => manager.create(options),
          (s) => manager.destroy(s.id),
        );
        expect(fork!.warm).toBe(true);
        expect(
          (await fork!.bash("ls -A1 /workspace; git log --all --format=%s; cat shared.txt")).output,
        ).toBe(".git\nshared.txt\ndrydock checkpoint\ninitial\nB\nchanged\n");
        expect((await fork!.bash("grep -rl 'only in A' /workspace /tmp 2>/dev/null | wc -l")).output).toBe(
          "0\n",
        );
        expect(await fork!.diff()).toBe(await source.diff());
      } finally {
        await source.destroy();
      }
    });
  });

  it.each([
    ["", ""],
    // The fork's index is then refreshed by git, not rebuilt from the box's fresh one.
    [", with an intent-to-add entry in the index", "echo later > intent.txt && git add -N intent.txt"],
    // Flags a delta of entries cannot carry: the index travels whole.
    [
      ", with skip-worktree and assume-unchanged entries",
      "git update-index --skip-worktree src/a.py && git update-index --assume-unchanged staged.txt",
    ],
  ])(
    "ends where a fork on a cold box ends, though the host moved on since the prefill%s",
    async (_, more) => {
      const repo = tempRepo({
        "README.md": "hello\n",
        "src/a.py": "a = 1\n",
        "src/deep/b.py": "b = 2\n",
        "gone/x.txt": "only in the prefilled commit\n",
        "run.sh": "#!/bin/sh\necho run\n",
      });
      repos.push(repo);
      chmodSync(join(repo.path, "run.sh"), 0o755);
      symlinkSync("src/a.py", join(repo.path, "link-to-a"));
      repo.commit("links and modes");
      git(repo.path, "branch", "old-branch");
      const engine = await testEngine();
      await withPrefilledPool(repo.path, async (manager) => {
        // After the prefill: a new commit that deletes and adds, and an edit not committed.
        rmSync(join(repo.path, "gone"), { recursive: true });
        mkdirSync(join(repo.path, "added"));
        writeFileSync(join(repo.path, "added", "new.txt"), "new\n");
        repo.commit("second");
        repo.write("src/a.py", "a = 10\n");

        const source = await Session.create(engine, { repo: repo.path, image: manager.pool!.profile.image });
        const made: Session[] = [];
        try {
          // The agent's work: edits, a commit and a branch in the box, a deletion, a staged file,
          // an untracked file, a new link; the shell moved and a variable exported.
          const work = await source.bash(
            [
              "echo changed >> README.md",
              "git add -A && git -c user.name=a -c user.email=a@b commit -qm 'in the box'",
              "git branch from-box",
              "rm run.sh",
              "echo staged > staged.txt && git add staged.txt",
              "echo untracked > untracked.txt",
              "ln -s ../README.md src/link-to-readme",
              "chmod +x src/a.py",
              ...(more ? [more] : []),
              "cd src/deep",
              "export FORK_VAR='a value with spaces'",
            ].join(" && "),
          );
          expect(work.exitCode, work.output).toBe(0);
          // One checkpoint for both forks (a fork of the state now saves a new one each time).
          await source.checkpoint("work");
          const expected = await view(source);
          const sourceDiff = await source.diff();

          const [warm] = await forkSession(
            source,
            { n: 1, checkpoint: "work" },
            (options) => manager.create(options),
            (s) => manager.destroy(s.id),
          );
          const [cold] = await forkSession(
            source,
            { n: 1, checkpoint: "work" },
            (options) => Session.create(engine, options),
            (s) => s.destroy(),
          );
          made.push(cold!);
          expect(warm!.warm).toBe(true);
          expect(cold!.warm).toBe(false);
          // The warm box's import ran in its channel's program, the cold box's (no files yet) in
          // the script: the two ends compared below are the two ways. (An index with entries
          // that are not plain travels whole, not as a delta: the script imports it.)
          expect(warm!.forkImportedByChannel).toBe(!more);
          expect(cold!.forkImportedByChannel).toBe(false);
          const warmView = await view(warm!);
          expect(warmView).toBe(await view(cold!));
          expect(warmView).toBe(expected);
          expect(warmView).not.toContain("gone/");
          expect(await warm!.diff()).toBe(sourceDiff);
          expect(await cold!.diff()).toBe(sourceDiff);
          // The prefill's marks are gone: the box is an ordinary session's now.
          expect(
            (
              await warm!.bash(
                "ls /tmp/.drydock-prefilled 2>&1 | wc -l; git -C /workspace status --short | wc -l",
              )
            ).output,
          ).toBe("1\n" + (await cold!.bash("git -C /workspace status --short | wc -l")).output);
          // Both go their own way.
          await warm!.bash("echo warm-only > /workspace/warm.txt");
          expect(await cold!.diff()).not.toContain("warm.txt");
          expect(await source.diff()).toBe(sourceDiff);
        } finally {
          await Promise.allSettled([source.destroy(), ...made.map((s) => s.destroy())]);
        }
      });
    },
  );
});
