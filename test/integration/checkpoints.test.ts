import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { describe, expect, it } from "vitest";
import { auditLogPath } from "../../src/session/audit-log.js";
import type { Session } from "../../src/session/session.js";
import { failure, inMemoryDrydock, ok } from "../helpers/mcp-client.js";
import { git } from "../helpers/repos.js";
import { testSession } from "../helpers/sessions.js";

/** A repository of `count` files in 100 directories, committed once; removed on dispose. */
function bigRepo(count: number): { path: string } & Disposable {
  const path = mkdtempSync(join(tmpdir(), "drydock-ckpt-"));
  git(path, "init", "-q", "-b", "main");
  for (let i = 0; i < count; i++) {
    const file = join(path, `d${i % 100}`, `f${i}.txt`);
    if (i < 100) mkdirSync(dirname(file), { recursive: true });
    writeFileSync(file, `file ${i}\n`);
  }
  writeFileSync(join(path, ".gitignore"), "build/\n");
  git(path, "add", "-A");
  // No background gc (10,000 loose objects would start one) racing the removal.
  git(path, "-c", "gc.auto=0", "commit", "-q", "-m", "initial");
  return { path, [Symbol.dispose]: () => rmSync(path, { recursive: true, force: true, maxRetries: 5 }) };
}

/** Everything a restore must bring back, as text: git's view, every file's bytes and mode, the shell. */
const STATE = `
git status --porcelain=v2 --branch --untracked-files=all
echo ---; git log --format='%H %P %s %D'; git log --exclude='refs/drydock/*' --all --format='%H %P %s %D'
echo ---; git for-each-ref --format='%(objectname) %(refname)' | grep -v ' refs/drydock/'
echo ---; git ls-files -s --debug | grep -v '^  \\(ctime\\|mtime\\|dev\\|uid\\|size\\)' | sha256sum
echo ---; find . -path ./.git -prune -o -path ./build -prune -o -type f -printf '%p %m\\n' | sort | sha256sum
echo ---; find . -path ./.git -prune -o -path ./build -prune -o -type f -print0 | sort -z | xargs -0 sha256sum | sha256sum
echo ---; find . -path ./.git -prune -o -type l -printf '%p -> %l\\n' | sort
echo ---; pwd; env | grep '^CK_' | sort
`;

async function state(session: Session): Promise<string> {
  const r = await session.bash(`( cd /workspace && ${STATE} ); pwd; env | grep '^CK_' | sort`);
  expect(r.exitCode).toBe(0);
  return r.stdout;
}

async function sh(session: Session, command: string): Promise<string> {
  const r = await session.bash(command);
  expect(r.exitCode, r.output).toBe(0);
  return r.stdout;
}

/** 20 files edited, added or removed, one commit on a new branch, staged and unstaged changes, a cd and exports. */
async function work(session: Session): Promise<void> {
  await sh(
    session,
    [
      "git checkout -q -b feature",
      "for i in 1 2 3 4 5 6 7 8 9 10; do echo changed >> d$i/f$i.txt; done",
      "git add -A && git commit -q -m 'ten edits'",
      "for i in 11 12 13 14; do echo later >> d$i/f$i.txt; done",
      "git add d11/f11.txt",
      "rm d16/f16.txt d17/f17.txt; mkdir -p new/deep; echo new > new/deep/a.txt; printf 'x\\0y' > new/bin",
      "chmod +x d18/f18.txt; ln -s ../d19/f19.txt new/link",
      "mkdir -p build && echo out > build/out.o",
      "git tag v1 HEAD~1",
      "cd new/deep && export CK_ONE='a b' CK_TWO=$'line1\\nline2'",
    ].join(" && "),
  );
}

async function mess(session: Session): Promise<void> {
  await sh(
    session,
    [
      "cd /workspace",
      "git reset -q --hard HEAD~1",
      "git checkout -q main",
      "git branch -D -q feature",
      "git tag -d v1 >/dev/null && git tag mess",
      "rm -rf d2 d3/f3.txt new",
      // A file where the checkpoint has a directory, and a directory where it has a file.
      "echo not-a-dir > new && rm d6/f6.txt && mkdir d6/f6.txt && echo inner > d6/f6.txt/inner",
      "echo junk > d4/f4.txt && echo other > extra.txt && git add extra.txt",
      "cd /tmp && unset CK_ONE && export CK_TWO=changed CK_THREE=3",
    ].join(" && "),
  );
}

describe("session checkpoints", () => {
  it("restores files, git's state and the shell exactly, in a 10,000-file repository", async () => {
    using repo = bigRepo(10_000);
    await using session = await testSession(repo.path);
    await work(session);
    const before = await state(session);
    const diffBefore = await session.diff();

    const saved = await session.checkpoint("before-mess", { message: "ten edits committed" });
    expect(saved).toMatchObject({
      name: "before-mess",
      message: "ten edits committed",
      cwd: "/workspace/new/deep",
    });
    expect(saved.changed_files).toBe(20);
    expect(saved.bytes).toBeGreaterThan(0);

    await mess(session);
    expect(await state(session)).not.toBe(before);

    const restored = await session.restore("before-mess");
    expect(restored.cwd).toBe("/workspace/new/deep");
    const after = await state(session);
    expect(after).toBe(before);
    expect(await session.diff()).toBe(diffBefore);
    // The ignored build output is left as it is (not saved by default, not removed).
    expect(await sh(session, "cat /workspace/build/out.o")).toContain("out");

    // Restoring twice is the same; a mess after a restore is undone again.
    await mess(session);
    await session.restore("before-mess");
    expect(await state(session)).toBe(before);
  });

  it("saves ignored files only when asked, and replaces a checkpoint of the same name", async () => {
    using repo = bigRepo(10);
    await using session = await testSession(repo.path);
    await sh(session, "mkdir -p build && echo one > build/a.o && echo one > d1/f1.txt");
    await session.checkpoint("plain");
    await session.checkpoint("all", { includeIgnored: true });
    await sh(session, "echo two > build/a.o && echo two > build/b.o && echo two > d1/f1.txt");
    await session.restore("plain");
    expect(await sh(session, "cat build/a.o build/b.o d1/f1.txt")).toBe("two\ntwo\none\n");
    await session.restore("all");
    expect(await sh(session, "cat build/a.o d1/f1.txt; ls build")).toBe("one\none\na.o\n");
    // The ignored files stay out of the diff.
    expect(await session.diff()).not.toContain("build/");

    await sh(session, "echo three > d1/f1.txt");
    await session.checkpoint("plain");
    expect(session.checkpoints.list().map((c) => c.name)).toEqual(["all", "plain"]);
    await sh(session, "echo four > d1/f1.txt");
    await session.restore("plain");
    expect(await sh(session, "cat d1/f1.txt")).toBe("three\n");
  });
});

describe("session_fork", () => {
  it("gives 4 sessions whose diffs equal the source's, that diverge on their own and go with their sessions", async () => {
    using repo = bigRepo(10_000);
    await using drydock = await inMemoryDrydock({ repo: repo.path, pool: { size: 2 } });
    const { client, server } = drydock;
    const call = async (name: string, args: Record<string, unknown> = {}) =>
      ok(await client.callTool({ name, arguments: args }));
    const created = await call("session_create");
    const sourceId = created.session_id as string;
    const source = server.manager.get(sourceId);
    await work(source);
    const sourceState = await state(source);
    const sourceDiff = (await call("session_diff", { session_id: sourceId })).diff as string;

    const forked = await call("session_fork", { session_id: sourceId, n: 4 });
    expect(forked.not_copied).toMatch(/running processes, background jobs, open ports/);
    const forks = forked.forks as Array<{ session_id: string; box: string; session_secret: string }>;
    expect(forks).toHaveLength(4);
    expect(new Set(forks.map((f) => f.session_id)).size).toBe(4);

    for (const fork of forks) {
      const diff = (await call("session_diff", { session_id: fork.session_id })).diff as string;
      expect(diff).toBe(sourceDiff);
      const session = server.manager.get(fork.session_id);
      expect(session.baseCommit).toBe(source.baseCommit);
      // Same files, same git state, same shell; build/ (ignored) is not carried over.
      expect((await state(session)).replace(/\n---\n[^-]*-> [^\n]*\n/, "")).toBe(
        sourceState.replace(/\n---\n[^-]*-> [^\n]*\n/, ""),
      );
    }

    // Each diverges on its own: a change in one is in neither the source nor the others.
    for (const [i, fork] of forks.entries()) {
      await call("bash", {
        session_id: fork.session_id,
        command: `echo fork${i} > /workspace/only-fork-${i}.txt`,
      });
    }
    for (const [i, fork] of forks.entries()) {
      const diff = (await call("session_diff", { session_id: fork.session_id })).diff as string;
      expect(diff).toContain(`only-fork-${i}.txt`);
      for (const other of forks.keys()) if (other !== i) expect(diff).not.toContain(`only-fork-${other}`);
    }
    expect((await call("session_diff", { session_id: sourceId })).diff).toBe(sourceDiff);

    // Each fork's audit log names its parent.
    const logPath = auditLogPath(forks[0]!.session_id)!;
    const start = readFileSync(logPath, "utf8")
      .split("\n")
      .filter(Boolean)
      .map((line) => JSON.parse(line) as { tool: string; args: Record<string, unknown> })
      .find((e) => e.tool === "session_start");
    expect(start?.args).toMatchObject({ forked_from: sourceId });

    const boxes = forks.map((f) => f.box);
    for (const fork of forks) await call("session_destroy", { session_id: fork.session_id });
    const { execFileSync } = await import("node:child_process");
    const running = execFileSync("docker", ["ps", "-a", "--format", "{{.ID}}"], { encoding: "utf8" });
    for (const box of boxes) expect(running).not.toContain(box);
  });

  it("forks from a named checkpoint, which each fork then holds", async () => {
    using repo = bigRepo(10);
    await using drydock = await inMemoryDrydock({ repo: repo.path, pool: { size: 0 } });
    const { client, server } = drydock;
    const call = async (name: string, args: Record<string, unknown> = {}) =>
      ok(await client.callTool({ name, arguments: args }));
    await call("bash", { command: "echo one > d1/f1.txt && export CK_AT=one" });
    await call("session_checkpoint", { name: "one" });
    await call("bash", { command: "echo two > d1/f1.txt && export CK_AT=two" });
    const forked = await call("session_fork", { checkpoint: "one" });
    const forkId = (forked.forks as Array<{ session_id: string }>)[0]!.session_id;
    const fork = server.manager.get(forkId);
    expect(await sh(fork, "cat d1/f1.txt; echo $CK_AT")).toBe("one\none\n");
    const listed = await call("session_checkpoints", { session_id: forkId });
    expect((listed.checkpoints as Array<{ name: string }>).map((c) => c.name)).toEqual(["one"]);
    await sh(fork, "echo three > d1/f1.txt");
    await call("session_restore", { session_id: forkId, name: "one" });
    expect(await sh(fork, "cat d1/f1.txt")).toBe("one\n");
    expect(
      failure(await client.callTool({ name: "session_fork", arguments: { checkpoint: "nope" } })),
    ).toMatch(/^checkpoint: no checkpoint named "nope" in this session; it has "one"/);
  });
});
