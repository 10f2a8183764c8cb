/**
 * The two ways a fork's box that is not prefilled gets its history: from the source's box in one
 * pack (a small history, the usual case, which the fork tests run), or from the host's `.git` with
 * only what that lacks from the source (a history past the limit, here forced with a limit of 0).
 * Both end with the source's files, git state and diff.
 */
import { randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import { Box } from "../../src/sandbox/box.js";
import { importCheckpoint, refTips, exportCheckpoint } from "../../src/workspace/box-checkpoint.js";
import { diffOut, readyForkBox } from "../../src/workspace/box-workspace.js";
import { SnapshotReceiver } from "../../src/workspace/snapshot-receiver.js";
import { git, tempRepo } from "../helpers/repos.js";
import { sandboxImage, testEngine, testSession } from "../helpers/sessions.js";

const STATE = [
  "cd /workspace",
  "find . -path ./.git -prune -o -type f -print0 | sort -z | xargs -0 -r sha1sum",
  "git status --porcelain=v1 --untracked-files=all --branch",
  // The agent's history; drydock's own checkpoint commits are compared by their parts below.
  "git log --format='%H %s' --exclude='refs/drydock/*' --all",
  // The checkpoint: a fork's commit of it holds the index as a delta, the rest is the same.
  "for k in $(git for-each-ref --format='%(objectname)' refs/drydock/checkpoints); do git rev-parse $k:w $k:h $k:r $k^; done",
  "git for-each-ref --format='%(refname) %(objectname)' refs/heads refs/tags",
].join("; echo ---; ");

describe("a fork's box that is not prefilled", () => {
  it.each([
    ["from the source's box", undefined],
    ["from the host's .git when the history is past the limit", 0],
  ])("gets the repository's history %s and ends where the source is", async (_, limit) => {
    using repo = tempRepo({ "a.txt": "one\n", "dir/b.txt": "two\n" });
    repo.write("a.txt", "one, again\n");
    repo.commit("second");
    git(repo.path, "tag", "v1");
    await using source = await testSession(repo.path);
    const work = await source.bash(
      "echo three > c.txt && git add c.txt && git -c user.name=a -c user.email=a@b commit -qm third && git checkout -qb side && echo four >> dir/b.txt && rm a.txt",
    );
    expect(work.exitCode, work.output).toBe(0);
    await source.checkpoint("here");
    const entry = source.checkpoints.get("here");

    await using box = await Box.create(await testEngine(), randomBytes(6).toString("hex"), {
      image: sandboxImage(),
    });
    const ready = await readyForkBox(box, repo.path, SnapshotReceiver.open(box), undefined, limit);
    // Past the limit the box holds the host's history, and says which commits it has whole.
    expect(ready.holds).toEqual(limit === 0 ? undefined : []);
    expect(ready.stats.objects.length > 0).toBe(limit === 0);
    const have = ready.holds ?? (await refTips(box, source.hostBaseCommit));
    const exported = await exportCheckpoint(source.box, entry.slot, {
      name: "here",
      commit: entry.commit,
      baseCommit: source.baseCommit,
      includeIgnored: false,
      have,
      maxBytes: 1024 * 1024,
    });
    await importCheckpoint(box, "0123456789abcdef", exported, { name: "here" });

    const seen = await box.sh(STATE);
    expect(seen.stdout.toString("utf8")).toBe((await source.bash(STATE)).output);
    expect((await diffOut(box)).toString("utf8")).toBe(await source.diff());
  });
});
