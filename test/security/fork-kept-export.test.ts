/**
 * A named checkpoint's export is kept, per source session, for later forks of it (session-fork.ts,
 * keptExports): a kept export is a cache, so it is attacked as one. A second fork of the same
 * checkpoint takes the kept pack and ends exactly where the first did; a checkpoint saved again
 * under the same name is never served from what was kept of the old one; two sessions with a
 * checkpoint of the same name never get each other's; a pack over the size kept is made anew each
 * time, and what is kept per session stays under its cap. Runs under runc and gVisor.
 */
import { afterEach, describe, expect, it } from "vitest";
import { Session } from "../../src/session/session.js";
import {
  KEPT_EXPORTS_BYTES,
  KEPT_EXPORT_BYTES,
  forkSeedOf,
  forkSession,
} from "../../src/session/session-fork.js";
import { tempRepo, type TempRepo } from "../helpers/repos.js";
import { testEngine, testSession } from "../helpers/sessions.js";

async function sh(session: Session, command: string): Promise<string> {
  const r = await session.bash(command);
  expect(r.exitCode, r.output).toBe(0);
  return r.stdout;
}

/** One fork of `source`'s checkpoint `name`, on a box of its own (no pool). */
async function forkOf(source: Session, name: string): Promise<Session> {
  const engine = await testEngine();
  const [fork] = await forkSession(
    source,
    { n: 1, checkpoint: name },
    (options) => Session.create(engine, options),
    (s) => s.destroy(),
  );
  return fork!;
}

/**
 * The export a fork of `name` to a box holding `have` gets, through a seed of its own. (Exports
 * are compared by identity with ===: vitest's toBe, when it fails or is negated, compares the two
 * deeply to suggest toEqual, byte by byte over packs of megabytes.)
 */
async function exportOf(source: Session, name: string, have: string[] = []) {
  const { seed, done } = await forkSeedOf(source, name);
  try {
    return await seed.exportFor(have);
  } finally {
    await done();
  }
}

describe("a kept checkpoint export", () => {
  const repos: TempRepo[] = [];
  const sessions: Session[] = [];
  afterEach(async () => {
    await Promise.allSettled(sessions.splice(0).map((s) => s.destroy()));
    for (const repo of repos.splice(0)) repo[Symbol.dispose]();
  });

  it("serves a second fork of the same checkpoint, which ends where the first did", async () => {
    const repo = tempRepo({ "a.txt": "one\n", "src/b.txt": "two\n" });
    repos.push(repo);
    const source = await testSession(repo.path);
    sessions.push(source);
    await sh(source, "echo edited >> a.txt && echo new > c.txt && git add c.txt && export KEPT_VAR=x");
    await source.checkpoint("k");
    const first = await exportOf(source, "k");
    // Another seed, another call: the same pack, not made again.
    expect((await exportOf(source, "k")) === first, "the kept export").toBe(true);
    // To a box holding other objects, another pack.
    const withBase = await exportOf(source, "k", [source.hostBaseCommit]);
    expect(withBase === first, "the same export").toBe(false);
    expect((await exportOf(source, "k", [source.hostBaseCommit])) === withBase, "the kept export").toBe(true);

    const one = await forkOf(source, "k");
    sessions.push(one);
    // The source moves on; a later fork of the checkpoint still starts from the checkpoint.
    await sh(source, "echo later >> a.txt && rm src/b.txt");
    const two = await forkOf(source, "k");
    sessions.push(two);
    const view = "cat a.txt c.txt src/b.txt; git status --porcelain; echo $KEPT_VAR";
    expect(await sh(two, view)).toBe(await sh(one, view));
    expect(await sh(two, view)).toBe("one\nedited\nnew\ntwo\n M a.txt\nA  c.txt\nx\n");
    expect(await two.diff()).toBe(await one.diff());
  });

  it("is never served for a checkpoint saved again under the same name", async () => {
    const repo = tempRepo({ "a.txt": "one\n" });
    repos.push(repo);
    const source = await testSession(repo.path);
    sessions.push(source);
    await sh(source, "echo first > a.txt");
    await source.checkpoint("k");
    const old = await exportOf(source, "k");
    await sh(source, "echo second > a.txt");
    await source.checkpoint("k");
    const now = await exportOf(source, "k");
    expect(now === old, "the same export").toBe(false);
    expect(now.commit).not.toBe(old.commit);
    const fork = await forkOf(source, "k");
    sessions.push(fork);
    expect(await sh(fork, "cat a.txt")).toBe("second\n");
  });

  it("of one session is never another session's, whatever their checkpoints are named", async () => {
    const repo = tempRepo({ "a.txt": "one\n" });
    repos.push(repo);
    const a = await testSession(repo.path);
    const b = await testSession(repo.path);
    sessions.push(a, b);
    await sh(a, "echo only-in-a > a.txt");
    await sh(b, "echo only-in-b > a.txt");
    await a.checkpoint("same");
    await b.checkpoint("same");
    const fromA = await exportOf(a, "same");
    const fromB = await exportOf(b, "same");
    expect(fromB === fromA, "the same export").toBe(false);
    const fork = await forkOf(b, "same");
    sessions.push(fork);
    expect(await sh(fork, "cat a.txt")).toBe("only-in-b\n");
  });

  it("is not kept past its size", async () => {
    const repo = tempRepo({ "a.txt": "one\n" });
    repos.push(repo);
    const source = await testSession(repo.path);
    sessions.push(source);
    // Random bytes do not compress: each pack is about as large as its file.
    const over = KEPT_EXPORT_BYTES + 64 * 1024;
    await sh(source, `head -c ${over} /dev/urandom > big.bin`);
    await source.checkpoint("big");
    const big = await exportOf(source, "big");
    expect(big.pack!.length).toBeGreaterThan(KEPT_EXPORT_BYTES);
    const again = await exportOf(source, "big");
    expect(again === big, "the same export").toBe(false);
    expect(again.pack!.equals(big.pack!)).toBe(true);
  }, 300_000);

  it("keeps at most its cap per session, the least recently used going first", async () => {
    const repo = tempRepo({ "a.txt": "one\n" });
    repos.push(repo);
    const source = await testSession(repo.path);
    sessions.push(source);
    // Three checkpoints whose packs together pass the cap (random bytes do not compress).
    const each = Math.floor(KEPT_EXPORTS_BYTES / 3) + 64 * 1024;
    for (const name of ["p1", "p2", "p3"]) {
      await sh(source, `rm -f part-*.bin && head -c ${each} /dev/urandom > part-${name}.bin`);
      await source.checkpoint(name);
    }
    const p1 = await exportOf(source, "p1");
    const p2 = await exportOf(source, "p2");
    expect((await exportOf(source, "p1")) === p1, "the kept export").toBe(true);
    const p3 = await exportOf(source, "p3");
    // p2 was used least recently when p3 came: it went, p1 and p3 stay.
    expect((await exportOf(source, "p1")) === p1, "the kept export").toBe(true);
    expect((await exportOf(source, "p3")) === p3, "the kept export").toBe(true);
    expect((await exportOf(source, "p2")) === p2, "the same export").toBe(false);
  }, 300_000);
});
