/**
 * Operations on a box's git take turns (Session.oneDiffAtATime). A call given up while it waits
 * must answer at once and never run, and a session_diff whose diff is refused must not leave its
 * stat queued: it would run on alone over every file, and the session's end (which keeps the last
 * diff within a time limit) would wait for it.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Session } from "../../src/session/session.js";
import { tempRepo, type TempRepo } from "../helpers/repos.js";
import { testSession } from "../helpers/sessions.js";

describe("turns on a box's git", () => {
  let repo: TempRepo;
  let session: Session;

  beforeAll(async () => {
    repo = tempRepo({ "README.md": "hello\n" });
    session = await testSession(repo.path);
  });

  afterAll(async () => {
    await session?.destroy();
    repo?.[Symbol.dispose]();
  });

  it("a call given up while it waits its turn answers at once and never runs", async () => {
    const slow = session.oneDiffAtATime(() => session.box.sh("sleep 3"));
    const given = new AbortController();
    const waiting = session.oneDiffAtATime(() => session.box.sh("touch /tmp/ran"), given.signal);
    setTimeout(() => given.abort(), 200);
    const started = Date.now();
    await expect(waiting).rejects.toThrow(/cancelled/);
    expect(Date.now() - started).toBeLessThan(2_000);
    // A diff whose time runs out in the queue is the same.
    await expect(session.diffBytes(AbortSignal.timeout(300))).rejects.toThrow(/cancelled/);
    expect(Date.now() - started).toBeLessThan(2_500);
    expect((await slow).exitCode).toBe(0);
    await session.oneDiffAtATime(async () => undefined);
    expect((await session.box.sh("test -e /tmp/ran")).exitCode).toBe(1);
    expect(await session.diff()).toBe("");
  });

  it("session_diff's stat is of the diff it came with, not of files changed after; without its index it is taken anew", async () => {
    const { diffOut, lastDiffStat } = await import("../../src/workspace/box-workspace.js");
    await session.box.sh("cd /workspace && echo changed > README.md && echo one > one.txt");
    const { diff, stat } = await session.diffWithStat();
    expect(diff).toContain("+changed");
    expect(stat).toMatch(
      /README\.md \| 2 \+-\n one\.txt +\| 1 \+\n 2 files changed, 2 insertions\(\+\), 1 deletion\(-\)\n$/,
    );
    // In one turn: a file the agent makes after the diff is taken is not in that diff's stat.
    const late = await session.oneDiffAtATime(async () => {
      await diffOut(session.box);
      await session.box.sh("cd /workspace && echo two > two.txt");
      return lastDiffStat(session.box);
    });
    expect(late).toContain("one.txt");
    expect(late).not.toContain("two.txt");
    // The next diff sees it.
    expect(await session.diffStat()).toMatch(/two\.txt +\| 1 \+\n 3 files changed/);
    // The diff's index removed in between (by the agent): the stat is taken from the files.
    const anew = await session.oneDiffAtATime(async () => {
      await diffOut(session.box);
      await session.box.sh("rm -f /tmp/.drydock-index && echo three > /workspace/three.txt");
      return lastDiffStat(session.box);
    });
    expect(anew).toMatch(/three\.txt +\| 1 \+\n two\.txt +\| 1 \+\n 4 files changed/);
    await session.box.sh("cd /workspace && git checkout -q README.md && rm one.txt two.txt three.txt");
    expect(await session.diff()).toBe("");
  });

  it("a diff given up midway leaves no lock; one refused over its cap runs no stat after it", async () => {
    // 60,000 new files make the stat take a while; one 22 MB file puts the diff over its 20 MB cap.
    const made = await session.box.sh(
      "cd /workspace && mkdir many && cd many && seq 60000 | xargs touch && head -c 16000000 /dev/urandom | base64 > ../big && echo done",
      [],
      { timeoutMs: 120_000 },
    );
    expect(made.stdout.toString()).toBe("done\n");
    // A diff given up while git adds the new files (a client's cancel) leaves no lock on the
    // index: the next diff works.
    await expect(session.diffBytes(AbortSignal.timeout(300))).rejects.toThrow(/cancelled/);
    expect(await session.diffStat()).toMatch(/60001 files changed/);
    await expect(session.diffWithStat()).rejects.toThrow(/the diff is larger than \d+ bytes/);
    const refused = Date.now();
    const nextTurn = await session.oneDiffAtATime(async () => Date.now());
    const waited = nextTurn - refused;
    // What a stat left queued would have cost: the same stat, alone.
    const statStarted = Date.now();
    expect(await session.diffStat()).toMatch(/60001 files changed/);
    const statCost = Date.now() - statStarted;
    console.log(`after a refused diff the next turn waited ${waited} ms; the stat takes ${statCost} ms`);
    expect(waited).toBeLessThan(statCost / 2);
  }, 180_000);
});
