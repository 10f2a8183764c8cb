/**
 * The box's tree writer (box-agent/drydock_box/tree.py) saves a checkpoint without its script when
 * it can vouch for the working tree: a path it got wrong would be a file a restore or a fork
 * loses, or one it brings back that was never there. After every step of an agent's work, honest
 * and hostile, each save is checked against what git itself makes of the same workspace: the
 * working tree's tree (`git add -A` and `write-tree` on the diff's index as it was), HEAD, the
 * refs, the agent's index and its time, the parent, the counts, and git's own check of every
 * object. Most saves must have been the tree writer's, or the test would prove nothing; the cases
 * it must leave to the script (attributes, a config that changes how files are stored, a file too
 * large, a second name of a file, a FIFO, a nested repository) must still give git's answer.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { boxSh } from "../../src/sandbox/box-channel.js";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { Session } from "../../src/session/session.js";
import { SessionManager } from "../../src/session/session-manager.js";
import {
  restoreCheckpoint,
  saveCheckpoint,
  type SavedCheckpoint,
} from "../../src/workspace/box-checkpoint.js";
import { ADD_CHANGES } from "../../src/workspace/changed-paths.js";
import { BASE_REF, DIFF_INDEX } from "../../src/workspace/snapshot-receiver.js";
import {
  AGENT_STEPS,
  agentStepFiles,
  NESTED_DIFFERS,
  NESTED_REPOSITORY,
  random,
} from "../helpers/agent-steps.js";
import { tempRepo, type TempRepo } from "../helpers/repos.js";
import { boxRuntime } from "../helpers/runtime.js";
import { sandboxImage, testEngine, testSession } from "../helpers/sessions.js";

/**
 * Checks checkpoint commit $1 against git's own account of the workspace now (with $2 = 1, also
 * git fsck --strict over every object); prints "same" and then "<paths that differ from the
 * base> <bytes>", or what differs. Ten processes, no pipeline and no command substitution that
 * runs a builtin: under gVisor each process costs tens of ms, and a save is checked at every step.
 */
const CHECK = `
set -e
cd /workspace
k=$1
export GIT_INDEX_FILE=/tmp/.ref-index
# read-tree writes a new index, so the copy of an earlier check never stays.
if [ -f ${DIFF_INDEX} ]; then cp ${DIFF_INDEX} "$GIT_INDEX_FILE"; else git read-tree ${BASE_REF}; fi
git add -A >/dev/null 2>&1 || true
w=$(git write-tree)
unset GIT_INDEX_FILE
read -r head < .git/HEAD
refs=
while read -r sha ref sym; do
  case "$ref" in refs/drydock/*) ;; *) [ -n "$sym" ] || refs+="$sha $ref"$'\\n' ;; esac
done < <(git for-each-ref --format='%(objectname) %(refname) %(symref)')
refs=\${refs%$'\\n'}
read -r mtime isize < <(stat -c '%Y %s' .git/index)
printf '%s' "$head" >/tmp/.want-h
printf '%s' "$refs" >/tmp/.want-r
printf '%s\\n' "$mtime" >/tmp/.want-m
{ read -r h; read -r r; read -r i; read -r m; } < <(git hash-object /tmp/.want-h /tmp/.want-r .git/index /tmp/.want-m)
printf -v entries '100644 blob %s\\th\\n100644 blob %s\\ti\\n100644 blob %s\\tm\\n100644 blob %s\\tr\\n040000 tree %s\\tw\\n' "$h" "$i" "$m" "$r" "$w"
top=$(git mktree <<<"\${entries%$'\\n'}")
{ read -r base; read -r got_w; read -r got_top; read -r parent; } < <(git rev-parse ${BASE_REF} "$k:w" "$k^{tree}" "$k^")
bad=
[ "$got_w" = "$w" ] || bad+=" w"
[ "$got_top" = "$top" ] || bad+=" top (HEAD, refs, index or its time)"
[ "$parent" = "$base" ] || bad+=" parent"
if [ "$2" = 1 ]; then git fsck --strict --no-dangling --no-progress >/tmp/.fsck 2>&1 || bad+=" fsck:$(head -c 300 /tmp/.fsck)"; fi
if [ -n "$bad" ]; then
  echo "differs:$bad"
  git diff-tree -r "$k:w" "$w" | head -20
  exit 0
fi
files=0 bytes=0 blobs=
while read -r _ mode _ blob status _; do
  files=$((files + 1))
  case "$mode:$status" in 160000:*) ;; *:[AMT]*) blobs+="$blob"$'\\n' ;; esac
done < <(git diff-tree -r --no-renames "$base" "$w")
if [ -n "$blobs" ]; then
  while read -r size; do bytes=$((bytes + size)); done < <(git cat-file --batch-check='%(objectsize)' <<<"\${blobs%$'\\n'}")
fi
echo same
echo "$files $((bytes + isize + \${#refs}))"
`;

/**
 * After a restore to checkpoint $1: "same" when the diff's index, brought up to date through the
 * watch (this request takes its changes), holds what a copy of it brought up to date by git
 * looking at every file holds, and that is the checkpoint's working tree but for a repository
 * inside it (NESTED_DIFFERS: a restore leaves one at the commit it is at); else what differs.
 */
const RESTORED = `
set -e
cd /workspace
${ADD_CHANGES}
export GIT_INDEX_FILE=${DIFF_INDEX}
add_changes >/dev/null 2>&1 || true
watched=$(git write-tree)
cp ${DIFF_INDEX} /tmp/.whole-index
export GIT_INDEX_FILE=/tmp/.whole-index
git add -A >/dev/null 2>&1 || true
whole=$(git write-tree)
want=$(git rev-parse "$1:w")
if [ "$whole" = "$watched" ] && ! git diff-tree -r "$want" "$whole" | grep -qvE '${NESTED_DIFFERS}'; then echo same; else
  echo "whole $whole watched $watched checkpoint $want"; git diff-tree -r "$want" "$whole" | head; git diff-tree -r "$want" "$watched" | head
fi
`;

/**
 * git fsck after every save the tree writer made, under runc; under gVisor (where it takes most of
 * a second and grows with the objects) once after each test: objects stay, so a bad one any save
 * wrote is still found, only not at its step.
 */
const FSCK_EVERY_SAVE = boxRuntime() !== "runsc";

let slots = 0;
/** A fresh slot name: 16 hex digits. */
function slot(): string {
  slots += 1;
  return slots.toString(16).padStart(16, "0");
}

async function bash(session: Session, command: string): Promise<void> {
  const r = await session.bash(command, { timeoutMs: 120_000 });
  expect(r.exitCode, r.output).toBe(0);
}

/** Saves a checkpoint and checks it against git's account; returns the save. */
async function saveAndCheck(session: Session, what: string): Promise<SavedCheckpoint> {
  const saved = await saveCheckpoint(session.box, slot(), {
    name: "t",
    includeIgnored: false,
    maxBytes: 1 << 30,
  });
  return checkSaved(session, saved, what);
}

/** Checks a save against git's account of the workspace now. */
async function checkSaved(session: Session, saved: SavedCheckpoint, what: string): Promise<SavedCheckpoint> {
  const fsck = saved.byTreeWriter && FSCK_EVERY_SAVE;
  const r = await boxSh(session.box, CHECK, [saved.commit, fsck ? "1" : "0"], {
    maxOutputBytes: 1 << 20,
  });
  expect(r.exitCode, r.stderr.toString()).toBe(0);
  const [verdict, counts] = r.stdout.toString().trim().split("\n");
  const how = saved.byTreeWriter ? "the tree writer" : "the script";
  expect(verdict, `${what} (saved by ${how})\n${r.stdout.toString()}`).toBe("same");
  expect(counts, `${what} (saved by ${how}): paths and bytes`).toBe(`${saved.files} ${saved.bytes}`);
  return saved;
}

/** Waits until the tree writer has the tree a script save left (it reads it in the background). */
async function settle(session: Session): Promise<void> {
  await bash(session, "sleep 0.3");
}

describe("the box's tree writer", () => {
  let repo: TempRepo;
  let session: Session;
  beforeAll(async () => {
    repo = tempRepo(agentStepFiles());
    session = await testSession(repo.path);
    await bash(session, `cd /workspace && ${NESTED_REPOSITORY}`);
  });
  afterAll(async () => {
    await session?.destroy();
    repo?.[Symbol.dispose]();
  }, 600_000);
  afterEach(async () => {
    const r = await boxSh(
      session.box,
      "cd /workspace && git fsck --strict --no-dangling --no-progress 2>&1",
      [],
      {
        maxOutputBytes: 1 << 16,
      },
    );
    expect(r.exitCode, `git fsck after the test: ${r.stdout.toString()}`).toBe(0);
  }, 120_000);

  it("a save with nothing changed, and one of many paths, are git's too", async () => {
    await saveAndCheck(session, "settling");
    await settle(session);
    expect((await saveAndCheck(session, "nothing changed")).byTreeWriter).toBe(true);
    expect((await saveAndCheck(session, "again")).byTreeWriter).toBe(true);
    await bash(
      session,
      "cd /workspace && mkdir -p many && for i in $(seq 1 100); do echo $i > many/$i.txt; done",
    );
    await saveAndCheck(session, "a hundred new files");
    await bash(session, "cd /workspace && rm -rf many");
    await saveAndCheck(session, "a hundred removed");
  }, 600_000);

  it("saves what git would save, step after step of an agent's work", async () => {
    const pick = random(20261128);
    const p = (n: number) => Math.floor(pick() * n);
    await saveAndCheck(session, "the first save");
    await settle(session);
    const by: boolean[] = [];
    const rounds = boxRuntime() === "runsc" ? 16 : 50;
    for (let round = 0; round < rounds; round++) {
      const steps = Array.from({ length: 1 + p(3) }, () => AGENT_STEPS[p(AGENT_STEPS.length)]!(p));
      await bash(
        session,
        `cd /workspace && { ${steps.map((s) => `{ ${s}; } 2>/dev/null`).join("; ")}; true; }`,
      );
      const saved = await saveAndCheck(session, `round ${round}: ${steps.join(" ; ")}`);
      by.push(saved.byTreeWriter);
      if (!saved.byTreeWriter) await settle(session);
    }
    // The tree writer was used, not bypassed.
    expect(by.filter(Boolean).length, by.join(" ")).toBeGreaterThan(rounds / 3);
  }, 600_000);

  it("a restore of what it saved puts every path back, and the diff after is git's", async () => {
    const pick = random(11);
    const p = (n: number) => Math.floor(pick() * n);
    const saved: Array<{ slot: string; commit: string }> = [];
    const by: boolean[] = [];
    for (let round = 0; round < (boxRuntime() === "runsc" ? 8 : 16); round++) {
      const steps = Array.from({ length: 1 + p(3) }, () => AGENT_STEPS[p(AGENT_STEPS.length)]!(p));
      const what = `round ${round}: ${steps.join(" ; ")}`;
      await bash(
        session,
        `cd /workspace && { ${steps.map((s) => `{ ${s}; } 2>/dev/null`).join("; ")}; true; }`,
      );
      if (saved.length === 0 || p(2) === 0) {
        const name = slot();
        const k = await saveCheckpoint(session.box, name, {
          name: "t",
          includeIgnored: false,
          maxBytes: 1 << 30,
        });
        saved.push({ slot: name, commit: k.commit });
        by.push(k.byTreeWriter);
        await settle(session);
        continue;
      }
      const back = saved[p(saved.length)]!;
      await restoreCheckpoint(session.box, back.slot, {
        name: "t",
        commit: back.commit,
        includeIgnored: false,
      });
      // The diff's index, brought up to date through the watch, holds every file as the
      // checkpoint does, and so does git looking at every file.
      const r = await boxSh(session.box, RESTORED, [back.commit], { changes: true, maxOutputBytes: 1 << 20 });
      expect(r.exitCode, r.stderr.toString()).toBe(0);
      expect(r.stdout.toString().trim(), what).toBe("same");
    }
    expect(by.filter(Boolean).length, by.join(" ")).toBeGreaterThan(0);
  }, 600_000);

  it("a FIFO where the box's channel reads a config does not stop later saves", async () => {
    // Any git there blocks on it, as the save's script does until it is given up; what reads it
    // in the channel (the watch, the tree writer) must not, or every later request would wait.
    await saveAndCheck(session, "settling");
    await bash(
      session,
      "cd /workspace && cp .git/config /tmp/config.kept && rm .git/config && mkfifo .git/config",
    );
    await expect(
      saveCheckpoint(session.box, slot(), {
        name: "t",
        includeIgnored: false,
        maxBytes: 1 << 30,
        signal: AbortSignal.timeout(5_000),
      }),
    ).rejects.toThrow();
    await bash(
      session,
      "cd /workspace && rm .git/config && cp /tmp/config.kept .git/config && mkdir -p fifo-case && echo after >> fifo-case/f",
    );
    await saveAndCheck(session, "after the FIFO");
    await settle(session);
    await bash(session, "cd /workspace && echo again >> fifo-case/f");
    expect((await saveAndCheck(session, "the writer again")).byTreeWriter).toBe(true);
  }, 600_000);

  it("leaves to the script what it cannot vouch for, and the script's answer stands", async () => {
    const cases: Array<[string, string, boolean | "fails"]> = [
      // [what, the step, whether the save after it may be the tree writer's, or must fail]
      [
        "files of its own",
        "rm -rf c && mkdir -p c/a c/b && for i in 0 1 2 3; do echo $i > c/a/f$i.txt; echo $i > c/b/f$i.txt; done",
        true,
      ],
      ["a file edited", "echo x >> c/a/f1.txt", true],
      ["a file made executable", "chmod +x c/a/f3.txt", true],
      [
        "attributes that change line endings",
        "printf '*.txt text eol=crlf\\n' > c/.gitattributes && printf 'a\\r\\nb\\r\\n' > c/a/crlf.txt",
        false,
      ],
      ["attributes still there", "echo y >> c/a/f1.txt", false],
      ["attributes gone", "rm c/.gitattributes", false],
      ["after the script", "echo z >> c/a/f1.txt", true],
      ["core.fileMode off", "git config core.fileMode false && chmod +x c/b/f2.txt", false],
      ["core.fileMode back", "git config core.fileMode true && chmod -x c/b/f2.txt", false],
      ["a file over 16 MiB", "head -c 17000000 /dev/zero > c/big.bin", false],
      ["the big file gone", "rm c/big.bin", true],
      ["a second name of a file", "ln c/a/f0.txt c/a/second && echo through >> c/a/second", false],
      ["the second name gone", "rm c/a/second && echo once >> c/a/f0.txt", true],
      // Git cannot add it: the save fails, saving nothing, rather than keep the index as it was.
      ["a FIFO where a file was", "rm c/b/f3.txt && mkfifo c/b/f3.txt && echo more >> c/a/f1.txt", "fails"],
      ["the FIFO gone", "rm c/b/f3.txt", true],
      [
        "a commit in the nested repository",
        "cd sub && echo c >> s.txt && git add -A && git -c user.name=a -c user.email=a@b commit -qm c",
        true,
      ],
      [
        "a new nested repository",
        "mkdir -p c/inner && cd c/inner && git init -q && echo i > i && git add i && git -c user.name=a -c user.email=a@b commit -qm i",
        true,
      ],
      [
        "a repository made where git tracks files",
        "cd c/a && git init -q && git -c user.name=a -c user.email=a@b commit -q --allow-empty -m e && cd ../.. && echo t >> c/a/f1.txt",
        true,
      ],
      ["that repository gone", "rm -rf c/a/.git && echo u >> c/a/f1.txt", true],
      ["a symlink in place of a directory", "rm -rf c/b && ln -s /etc c/b", true],
      ["a file edited after", "echo w >> c/a/f0.txt", true],
      ["a name git could read as a pattern", "echo p > 'c/a/*' && echo q > 'c/a/:(top)'", true],
      [
        "a name with a newline and bytes that are not UTF-8",
        "printf n > \"c/a/x$(printf '\\nb\\377')\"",
        true,
      ],
      ["a link to outside", "ln -s /etc/passwd c/a/pw", true],
      [
        "a directory of new files",
        "mkdir -p c/new/deeper && echo a > c/new/a && echo b > c/new/deeper/b && echo i > c/new/i.log",
        true,
      ],
      ["a file made a directory", "rm c/a/f2.txt && mkdir c/a/f2.txt && echo in > c/a/f2.txt/in", true],
      ["an ignored file", "echo ignored > c/a/more.log", true],
      [
        "HEAD detached, a branch and a tag",
        "git checkout -q --detach && git branch -f other && git tag -f t1",
        true,
      ],
    ];
    await saveAndCheck(session, "settling");
    await settle(session);
    const wrong: string[] = [];
    for (const [what, step, may] of cases) {
      await bash(session, `cd /workspace && ${step}`);
      if (may === "fails") {
        await expect(
          saveCheckpoint(session.box, slot(), { name: "t", includeIgnored: false, maxBytes: 1 << 30 }),
          what,
        ).rejects.toThrow(/can only add regular files/);
        continue;
      }
      const saved = await saveAndCheck(session, what);
      if (saved.byTreeWriter && !may) wrong.push(what);
      if (!saved.byTreeWriter) await settle(session);
    }
    expect(wrong, "the tree writer saved what it cannot vouch for").toEqual([]);
  }, 600_000);
});

/**
 * A session's first checkpoint: the request that starts the box's watch at a session's start also
 * has the tree writer read the tree of the diff's index, in the background (tree.py, prime), so
 * the first save is the tree writer's too. Nothing here waits for that start: the agent's changes
 * and the save race it, as a caller's would.
 */
describe("a session's first checkpoint", () => {
  const repos: TempRepo[] = [];
  const sessions: Session[] = [];
  afterAll(async () => {
    await Promise.all(sessions.map((s) => s.destroy()));
    for (const r of repos) r[Symbol.dispose]();
  }, 600_000);

  /** A session on a new repository of `files`, handed over as soon as it is ready. */
  async function fresh(files: Record<string, string>): Promise<Session> {
    const repo = tempRepo(files);
    repos.push(repo);
    const session = await Session.create(await testEngine(), { repo: repo.path, image: sandboxImage() });
    sessions.push(session);
    return session;
  }

  /** The save a checkpoint makes, in its turn with the session's other diffs (as Session.checkpoint). */
  function saveInTurn(session: Session): Promise<SavedCheckpoint> {
    return session.oneDiffAtATime(() =>
      saveCheckpoint(session.box, slot(), { name: "t", includeIgnored: false, maxBytes: 1 << 30 }),
    );
  }

  it("taken at once after the start is the tree writer's and git's, and so are the saves after it", async () => {
    const deep = Array.from({ length: 40 }, (_, i) => `n${i}`).join("/");
    const session = await fresh({ ...agentStepFiles(), [`${deep}/leaf.txt`]: "leaf\n" });
    await bash(
      session,
      `cd /workspace && echo e >> d0/f0.txt && rm d2/f3.txt && mkdir -p d1/new && echo n > d1/new/n.txt && ` +
        `ln -s /etc/passwd d1/pw && echo i > d2/x.log && echo deeper >> ${deep}/leaf.txt && ${NESTED_REPOSITORY}`,
    );
    const first = await checkSaved(session, await saveInTurn(session), "the first save");
    expect(first.byTreeWriter, "the session's first checkpoint went to its script").toBe(true);
    // The same file again within the second, the same size: the next save holds the new bytes.
    await bash(
      session,
      "cd /workspace && echo E >> d0/f0.txt && printf x > d0/f1.txt && printf y > d0/f1.txt",
    );
    expect((await checkSaved(session, await saveInTurn(session), "the second save")).byTreeWriter).toBe(true);
  }, 600_000);

  it("from a pool prefilled with the repository is the tree writer's and git's", async () => {
    // The warm box's watch and tree start in the pool; the session keeps them (its copy-in is in
    // the watch's account) and counts from the base its copy-in set.
    const repo = tempRepo({ ...agentStepFiles(), "d1/deep/er/x.txt": "x\n" });
    repos.push(repo);
    writeFileSync(join(repo.path, "d0", "host-only.txt"), "uncommitted on the host\n");
    const manager = await SessionManager.start(await testEngine(), {
      pool: { size: 1, profile: { image: sandboxImage() }, prefillRepo: repo.path },
    });
    try {
      await manager.pool!.full();
      const session = await manager.create({ repo: repo.path, image: sandboxImage() });
      expect(session.warm).toBe(true);
      await bash(
        session,
        "cd /workspace && echo e >> d0/f0.txt && rm d2/f3.txt && echo n > d1/deep/er/n.txt",
      );
      const first = await checkSaved(session, await saveInTurn(session), "the first save");
      expect(first.byTreeWriter, "the session's first checkpoint went to its script").toBe(true);
      await bash(session, "cd /workspace && echo again >> d1/deep/er/x.txt");
      expect((await checkSaved(session, await saveInTurn(session), "the second save")).byTreeWriter).toBe(
        true,
      );
    } finally {
      await manager.closeAll();
    }
  }, 600_000);

  it("a file the agent cannot read fails the first save as git does, and saves nothing wrong", async () => {
    const session = await fresh(agentStepFiles());
    await bash(session, "cd /workspace && echo secret > d0/locked.txt && chmod 000 d0/locked.txt");
    await expect(saveInTurn(session)).rejects.toThrow(/locked\.txt|Permission denied|permission/i);
    await bash(session, "cd /workspace && chmod 644 d0/locked.txt && echo more >> d0/f0.txt");
    await checkSaved(session, await saveInTurn(session), "once it can be read");
  }, 600_000);
});
