/**
 * The box channel's watch of /workspace (box-agent/drydock_box/watch.py) narrows what git looks at when it
 * brings the diff's index up to date: a path it misses would be a change left out of a diff or a
 * checkpoint, or a file a restore does not put back. Here every step of an agent's work, honest
 * and hostile (renames of files and directories, a file turned into a directory, symlinks, hard
 * links, mode changes, ignore rules changed, a nested repository's commits, names git could read
 * as patterns, floods of events, the watcher killed), is followed by the same diff taken twice:
 * through the watch, and by git looking at every file. They must be the same bytes, and most steps
 * must have gone through the watch, or the test would prove nothing.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BOX_CHANNEL_NAME, boxSh } from "../../src/sandbox/box-channel.js";
import type { Session } from "../../src/session/session.js";
import { restoreCheckpoint, saveCheckpoint } from "../../src/workspace/box-checkpoint.js";
import { ADD_CHANGES } from "../../src/workspace/changed-paths.js";
import { BASE_REF, DIFF_INDEX } from "../../src/workspace/snapshot-receiver.js";
import {
  AGENT_STEPS as STEPS,
  agentStepFiles,
  NESTED_DIFFERS,
  NESTED_REPOSITORY,
  random,
} from "../helpers/agent-steps.js";
import { tempRepo, type TempRepo } from "../helpers/repos.js";
import { boxRuntime } from "../helpers/runtime.js";
import { testSession } from "../helpers/sessions.js";

/**
 * What the watch said (stderr: "all", "none" or "paths N"), then the diff through the watch and
 * the one git makes looking at everything, each from its own index: "same" or the two diffs.
 */
const COMPARE = `
set -e
cd /workspace
export GIT_INDEX_FILE=${DIFF_INDEX}
${ADD_CHANGES}
case "\${DRYDOCK_CHANGES:-unset}" in
  /dev/fd/*) printf 'paths %s\\n' "$(tr -cd '\\0' < "$DRYDOCK_CHANGES" | wc -c)" >&2 ;;
  *) printf '%s\\n' "\${DRYDOCK_CHANGES:-unset}" >&2 ;;
esac
if [ -f "$GIT_INDEX_FILE" ]; then add_changes; else git read-tree ${BASE_REF}; add_changes whole; fi
FLAGS="--no-ext-diff --no-textconv --no-color --binary --full-index -M"
git diff $FLAGS --cached ${BASE_REF} > /tmp/.watched.diff
# The reference: an index of its own, kept from one step to the next as the diff's was before
# the watch, brought up to date by git looking at every file.
export GIT_INDEX_FILE=/tmp/.full-index
[ -f "$GIT_INDEX_FILE" ] || git read-tree ${BASE_REF}
git add -A
git diff $FLAGS --cached ${BASE_REF} > /tmp/.full.diff
if cmp -s /tmp/.watched.diff /tmp/.full.diff; then echo same; else
  echo "watched:"; cat /tmp/.watched.diff; echo "full:"; cat /tmp/.full.diff
fi
`;

async function compare(session: Session): Promise<{ said: string; same: string }> {
  const result = await boxSh(session.box, COMPARE, [], { changes: "start", maxOutputBytes: 1 << 20 });
  expect(result.exitCode, result.stderr.toString()).toBe(0);
  // What the watch said is the first line; git's warnings (an embedded repository) may follow.
  return { said: result.stderr.toString().split("\n")[0]!, same: result.stdout.toString().trim() };
}

async function bash(session: Session, command: string): Promise<void> {
  const r = await session.bash(command, { timeoutMs: 120_000 });
  expect(r.exitCode, r.output).toBe(0);
}

describe("the watch of the workspace", () => {
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
  });

  it("gives the diff git gives looking at every file, step after step of an agent's work", async () => {
    const pick = random(20261127);
    const p = (n: number) => Math.floor(pick() * n);
    const said: string[] = [];
    // Under gVisor each step's two diffs take seconds: half as many steps there.
    const rounds = boxRuntime() === "runsc" ? 20 : 40;
    for (let round = 0; round < rounds; round++) {
      const steps = Array.from({ length: 1 + p(3) }, () => STEPS[p(STEPS.length)]!(p));
      await bash(
        session,
        `cd /workspace && { ${steps.map((s) => `{ ${s}; } 2>/dev/null`).join("; ")}; true; }`,
      );
      const { said: what, same } = await compare(session);
      said.push(what);
      expect(same, `round ${round}: ${steps.join(" ; ")}\n(the watch said: ${what})`).toBe("same");
    }
    // The watch was used, not bypassed: most rounds named their paths.
    const named = said.filter((s) => s.startsWith("paths ")).length;
    expect(named, said.join(", ")).toBeGreaterThan(rounds / 4);
    expect(said.filter((s) => s === "unset")).toEqual([]);
  });

  it("a restore after many steps puts back every path, and so does the next", async () => {
    const pick = random(7);
    const p = (n: number) => Math.floor(pick() * n);
    await bash(session, "cd /workspace && echo base > d1/kept.txt && mkdir -p d2/z && echo z > d2/z/z.txt");
    const saved = await saveCheckpoint(session.box, "0123456789abcdef", {
      name: "t",
      includeIgnored: false,
      maxBytes: 1 << 30,
    });
    // Whether the box channel's program restored (box-agent/drydock_box/restore.py) or its script did.
    const byChannel: boolean[] = [];
    for (let round = 0; round < (boxRuntime() === "runsc" ? 4 : 8); round++) {
      const steps = Array.from({ length: 3 }, () => STEPS[p(STEPS.length)]!(p));
      await bash(
        session,
        `cd /workspace && { ${steps.map((s) => `{ ${s}; } 2>/dev/null`).join("; ")}; true; }`,
      );
      const back = await restoreCheckpoint(session.box, "0123456789abcdef", {
        name: "t",
        commit: saved.commit,
        includeIgnored: false,
      });
      byChannel.push(back.byChannel);
      // Every file as the checkpoint holds it: the working tree, looked at whole, is its tree, but
      // for a repository inside it, which a restore leaves at the commit it is at (NESTED_DIFFERS).
      const r = await session.box.sh(
        `cd /workspace && export GIT_INDEX_FILE=/tmp/.check-index && rm -f $GIT_INDEX_FILE && git read-tree ${BASE_REF} && git add -A && git diff-tree -r ${saved.commit}:w $(git write-tree) | grep -vE '${NESTED_DIFFERS}' || true`,
      );
      expect(r.stdout.toString(), `round ${round}: ${steps.join(" ; ")}`).toBe("");
      expect((await compare(session)).same).toBe("same");
    }
    // Most went by the channel's program: the comparison above is of its restores, not only the script's.
    expect(byChannel.filter(Boolean).length, byChannel.join(" ")).toBeGreaterThan(byChannel.length / 2);
  });

  it("sees a file changed through another name, and ignore rules kept outside the tree", async () => {
    const step = async (command: string) => {
      await bash(session, `cd /workspace && ${command}`);
      const { said, same } = await compare(session);
      expect(same, command).toBe("same");
      return said;
    };
    await step("rm -rf h && mkdir -p h/one h/two && echo base > h/one/base.txt");
    expect(await step("echo named >> h/one/base.txt")).toMatch(/^paths /);
    // Two names in the tree: a write through one is reported for that name only.
    await step("ln h/one/base.txt h/two/second");
    await step("echo through >> h/two/second");
    await step("rm h/two/second");
    // A second name under .git, where nothing is watched: the tree's name stays in view.
    await step("echo d > .git/notes-of-mine && ln .git/notes-of-mine h/described");
    expect(await step("echo unseen >> .git/notes-of-mine")).toBe("all");
    await step("rm h/described");
    expect(await step("echo back >> h/one/base.txt")).toMatch(/^paths /);
    // Ignore rules in a file the repository's config names: git looks at everything while it does.
    await step(
      "echo '*.tmp' > /tmp/excludes && git config core.excludesFile /tmp/excludes && echo t > h/a.tmp",
    );
    expect(await step("echo '' > /tmp/excludes")).toBe("all");
    await step("git config --unset core.excludesFile && rm -f h/a.tmp");
    // A directory the agent locks and opens again: git sees it as it would looking at everything.
    await step("mkdir -p h/locked/in && echo x > h/locked/in/f && echo y > h/locked/g");
    await step("chmod 000 h/locked/in");
    await step("chmod 755 h/locked/in && echo z >> h/locked/in/f");
    await step("echo settle >> h/one/base.txt");
    expect(await step("echo again >> h/one/base.txt")).toMatch(/^paths /);
  });

  it("a flood of changes, and more directories than it watches, cost speed, not a change", async () => {
    // 17,000 new files at once (past the kernel's queue of 16,384 events, and the watch's 128
    // paths): git looks at everything, and the watch looks at the tree anew.
    await bash(session, "cd /workspace && mkdir -p flood && cd flood && seq -f 'f%g' 1 17000 | xargs touch");
    expect(await compare(session)).toEqual({ said: "all", same: "same" });
    await bash(session, "cd /workspace && rm -rf flood && echo one > d1/after-flood.txt");
    expect(await compare(session)).toMatchObject({ same: "same" });
    const back = await compare(session);
    expect(back.said).toMatch(/^(paths \d+|none)$/);
    // A directory it cannot watch (made with no permissions), or more directories than it
    // watches: the watch gives up, and every later diff looks at everything. (The 20,000 is the
    // program's own count, the same under any runtime; under gVisor making and listing 20,001
    // directories twice takes over a minute, so there the first way stands for both.)
    await bash(session, "cd /workspace && mkdir -m 000 closed && echo beside > d1/beside.txt");
    expect((await compare(session)).same).toBe("same");
    await bash(session, "cd /workspace && rmdir closed && echo later > d1/later.txt");
    expect(await compare(session)).toEqual({ said: "all", same: "same" });
    if (boxRuntime() === "runsc") return;
    await using fresh = await testSession(repo.path);
    await compare(fresh);
    await bash(
      fresh,
      "cd /workspace && mkdir -p many && cd many && seq -f 'd%g' 1 20001 | xargs mkdir && echo last > d20001/x.txt",
    );
    expect((await compare(fresh)).same).toBe("same");
    await bash(fresh, "cd /workspace && rm -rf many && echo later > d1/later.txt");
    expect(await compare(fresh)).toEqual({ said: "all", same: "same" });
  });

  it("an agent that kills the watcher leaves the diff whole", async () => {
    await using fresh = await testSession(repo.path);
    await bash(fresh, "cd /workspace && echo one > d0/f0.txt");
    await compare(fresh);
    await bash(fresh, "echo two > /workspace/d0/f1.txt");
    expect((await compare(fresh)).said).toMatch(/^paths /);
    // The agent runs as the same user as the channel's program: it can end it, not fool it.
    await fresh.bash(`pkill -f ${BOX_CHANNEL_NAME} || true`);
    await bash(fresh, "echo three > /workspace/d0/f2.txt");
    const after = await compare(fresh);
    expect(after.same).toBe("same");
    // Through an exec (no channel) or a new program (a new watch), git looks at everything.
    expect(["unset", "all"]).toContain(after.said);
  });
});
