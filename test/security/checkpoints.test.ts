/**
 * Checkpoints and forks against a hostile client and a hostile agent: names are the client's and
 * never reach a path or a git command; the data is in the box, where the agent may change it, so a
 * restore is faithful or refused and nothing of it reaches the host or another session; symlinks
 * stay links; the limits hold; a fork is counted against admission and another client's session
 * cannot be forked.
 */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { Session } from "../../src/session/session.js";
import { boxSh } from "../../src/sandbox/box-channel.js";
import { exportCheckpoint, restoreCheckpoint } from "../../src/workspace/box-checkpoint.js";
import { CHECKPOINT_SCRIPT } from "../../src/workspace/checkpoint-script.js";
import { failure, inMemoryDrydock, ok } from "../helpers/mcp-client.js";
import { git, tempRepo } from "../helpers/repos.js";
import { testSession } from "../helpers/sessions.js";

async function sh(session: Session, command: string): Promise<string> {
  const r = await session.bash(command);
  expect(r.exitCode, r.output).toBe(0);
  return r.stdout;
}

describe("checkpoint names", () => {
  it("refuses hostile names before anything reaches the box or the host", async () => {
    using repo = tempRepo({ "a.txt": "one\n" });
    await using drydock = await inMemoryDrydock({ repo: repo.path, pool: { size: 0 } });
    const { client, server } = drydock;
    ok(await client.callTool({ name: "bash", arguments: { command: "echo two > a.txt" } }));
    const hostile = [
      "../x",
      "../../../../etc/passwd",
      "a/../../b",
      "a/b",
      "-x",
      "--all",
      ".hidden",
      "a..b",
      "a\nb",
      "a\u001b[31mred",
      "a\rb",
      "a b",
      "refs/heads/main",
      "x".repeat(65),
      "y".repeat(200),
      "ä",
    ];
    for (const name of hostile) {
      for (const tool of ["session_checkpoint", "session_restore"]) {
        const text = failure(await client.callTool({ name: tool, arguments: { name } }));
        expect(text, `${tool} ${JSON.stringify(name)}`).toMatch(
          /^name: ".*" is not a checkpoint name; use letters/,
        );
        // The name is quoted as JSON: no control character reaches a terminal.
        expect(text).not.toMatch(/[\u0000-\u001f]/);
      }
      const fork = failure(await client.callTool({ name: "session_fork", arguments: { checkpoint: name } }));
      expect(fork).toMatch(/^checkpoint: ".*" is not a checkpoint name/);
    }
    const session = server.manager.list()[0]!;
    expect(await sh(session, "git for-each-ref refs/drydock/checkpoints | wc -l")).toBe("0\n");
    expect(server.manager.list()).toHaveLength(1);
    expect(readFileSync(join(repo.path, "a.txt"), "utf8")).toBe("one\n");
  });
});

describe("checkpoint data the agent tampers with", () => {
  it("refuses a restore whose data was moved, removed or damaged, changing nothing; other sessions and the host are untouched", async () => {
    using repo = tempRepo({ "a.txt": "one\n", "b.txt": "bee\n" });
    await using drydock = await inMemoryDrydock({ repo: repo.path, pool: { size: 0 } });
    const { client, server } = drydock;
    const call = async (name: string, args: Record<string, unknown> = {}) =>
      ok(await client.callTool({ name, arguments: args }));
    const first = (await call("session_create")).session_id as string;
    const other = (await call("session_create")).session_id as string;
    const session = server.manager.get(first);
    const bystander = server.manager.get(other);
    await sh(bystander, "echo mine > a.txt");
    await call("session_checkpoint", { session_id: other, name: "keep" });

    await sh(session, "echo two > a.txt");
    await call("session_checkpoint", { session_id: first, name: "good" });
    await call("session_checkpoint", { session_id: first, name: "moved" });
    await call("session_checkpoint", { session_id: first, name: "gone" });
    await sh(session, "echo three > a.txt");

    // The agent points one checkpoint's ref at another commit, deletes one, and removes the
    // objects of a third's working tree.
    const refs = (await sh(session, "git for-each-ref --format='%(refname)' refs/drydock/checkpoints"))
      .trim()
      .split("\n");
    expect(refs).toHaveLength(3);
    expect(session.checkpoints.list().map((c) => c.name)).toEqual(["good", "moved", "gone"]);
    await sh(session, `for r in ${refs.join(" ")}; do git update-ref "$r" refs/drydock/base; done`);
    for (const name of ["good", "moved", "gone"]) {
      const refused = failure(
        await client.callTool({ name: "session_restore", arguments: { session_id: first, name } }),
      );
      expect(refused).toMatch(
        new RegExp(
          `^checkpoint "${name}" cannot be restored: its data in the box was changed\\. Nothing was changed`,
        ),
      );
    }
    await sh(session, `for r in ${refs.join(" ")}; do git update-ref -d "$r"; done`);
    expect(
      failure(
        await client.callTool({ name: "session_restore", arguments: { session_id: first, name: "good" } }),
      ),
    ).toMatch(/^checkpoint "good" cannot be restored: its data in the box is gone\. Nothing was changed/);
    expect(await sh(session, "cat a.txt")).toBe("three\n");

    // A checkpoint whose new objects were removed is refused before any file is touched.
    await sh(session, "echo four > a.txt && echo new > c.txt");
    await call("session_checkpoint", { session_id: first, name: "damaged" });
    await sh(
      session,
      'for o in $(git rev-list --objects --glob=refs/drydock/checkpoints/* --not refs/drydock/base | awk \'$2 == "w/a.txt" || $2 == "w/c.txt" { print $1 }\'); do rm -f .git/objects/${o:0:2}/${o:2}; done; echo five > a.txt',
    );
    expect(
      failure(
        await client.callTool({ name: "session_restore", arguments: { session_id: first, name: "damaged" } }),
      ),
    ).toMatch(
      /^checkpoint "damaged" cannot be restored: its objects in the box are missing or damaged\. Nothing was changed/,
    );
    expect(await sh(session, "cat a.txt")).toBe("five\n");

    // Nothing reached the other session or the host.
    await sh(bystander, "echo later > a.txt");
    await call("session_restore", { session_id: other, name: "keep" });
    expect(await sh(bystander, "cat a.txt")).toBe("mine\n");
    expect(readFileSync(join(repo.path, "a.txt"), "utf8")).toBe("one\n");
    expect(git(repo.path, "status", "--porcelain")).toBe("");
  });

  it("refuses a restore when a tree it reads or a commit a ref will name is gone, changing nothing", async () => {
    using repo = tempRepo({ "a.txt": "one\n", "sub/b.txt": "bee\n" });
    await using drydock = await inMemoryDrydock({ repo: repo.path, pool: { size: 0 } });
    const { client, server } = drydock;
    const call = async (name: string, args: Record<string, unknown> = {}) =>
      ok(await client.callTool({ name, arguments: args }));
    await call("bash", { command: "echo two > sub/b.txt" });
    await call("session_checkpoint", { name: "tree" });
    const session = server.manager.list()[0]!;
    // The checkpoint's tree of sub/ (new: sub/b.txt changed) goes; the files change after.
    await sh(
      session,
      "k=$(git for-each-ref --format='%(objectname)' refs/drydock/checkpoints) && t=$(git rev-parse --verify $k:w/sub) && test -f .git/objects/${t:0:2}/${t:2} && rm -f .git/objects/${t:0:2}/${t:2} && echo three > sub/b.txt && echo x > a.txt",
    );
    const restoreOf = (name: string) => client.callTool({ name: "session_restore", arguments: { name } });
    expect(failure(await restoreOf("tree"))).toMatch(
      /^checkpoint "tree" cannot be restored: its objects in the box are missing or damaged\. Nothing was changed/,
    );
    expect(await sh(session, "cat a.txt sub/b.txt")).toBe("x\nthree\n");

    // A commit made after the base, which a branch names in the checkpoint, goes.
    await sh(session, "git checkout -q -b topic && git commit -qam topic");
    await call("session_checkpoint", { name: "commit" });
    await sh(
      session,
      "c=$(git rev-parse topic) && git checkout -q main && git branch -D -q topic && rm -f .git/objects/${c:0:2}/${c:2} && echo four > a.txt",
    );
    expect(failure(await restoreOf("commit"))).toMatch(
      /^checkpoint "commit" cannot be restored: its objects in the box are missing or damaged\. Nothing was changed/,
    );
    expect(await sh(session, "cat a.txt; git branch --format='%(refname:short)'")).toBe("four\nmain\n");
  });

  it("refuses a fork whose source's checkpoint was damaged, leaving no session behind", async () => {
    using repo = tempRepo({ "a.txt": "one\n" });
    await using drydock = await inMemoryDrydock({ repo: repo.path, pool: { size: 0 } });
    const { client, server } = drydock;
    ok(await client.callTool({ name: "bash", arguments: { command: "echo two > a.txt" } }));
    ok(await client.callTool({ name: "session_checkpoint", arguments: { name: "x" } }));
    const session = server.manager.list()[0]!;
    await sh(
      session,
      "git update-ref refs/drydock/checkpoints/$(git for-each-ref --format='%(refname:lstrip=3)' refs/drydock/checkpoints) HEAD",
    );
    expect(
      failure(await client.callTool({ name: "session_fork", arguments: { checkpoint: "x", n: 2 } })),
    ).toMatch(/^checkpoint "x" cannot be restored: its data in the box was changed/);
    expect(server.manager.list()).toHaveLength(1);
    // An object of the checkpoint removed from the source's store: the pack cannot be made.
    ok(await client.callTool({ name: "session_checkpoint", arguments: { name: "y" } }));
    const y = session.checkpoints.get("y").commit;
    const removed = await sh(
      session,
      `b=$(git rev-parse ${y}:w/a.txt) && rm -f .git/objects/\${b:0:2}/\${b:2} && ! git cat-file -e $b 2>/dev/null && echo gone`,
    );
    expect(removed).toBe("gone\n");
    expect(
      failure(await client.callTool({ name: "session_fork", arguments: { checkpoint: "y", n: 2 } })),
    ).toMatch(/^checkpoint "y" cannot be restored: its objects in the box are missing or damaged/);
    expect(server.manager.list()).toHaveLength(1);
  });
});

describe("symlinks in a checkpoint", () => {
  it("stay links in the box and in a fork, and a restore never writes through one", async () => {
    using repo = tempRepo({ "a/b.txt": "bee\n" });
    await using drydock = await inMemoryDrydock({ repo: repo.path, pool: { size: 0 } });
    const { client, server } = drydock;
    const call = async (name: string, args: Record<string, unknown> = {}) =>
      ok(await client.callTool({ name, arguments: args }));
    await call("bash", {
      command:
        "ln -s /etc/passwd passwd && ln -s / root && ln -s ../../../../.. up && ln -s " +
        `${repo.path} host-repo && echo changed > a/b.txt`,
    });
    await call("session_checkpoint", { name: "links" });
    const session = server.manager.list()[0]!;
    // The agent swaps the directory for a link out of the workspace: a restore must put the
    // directory back, not write b.txt where the link leads.
    await sh(
      session,
      "mkdir -p /tmp/target && rm -rf a && ln -s /tmp/target a && rm passwd && echo no > passwd",
    );
    await call("session_restore", { name: "links" });
    expect(await sh(session, "test -d a && test ! -L a && cat a/b.txt; ls /tmp/target | wc -l")).toBe(
      "changed\n0\n",
    );
    expect(await sh(session, "readlink passwd root up host-repo")).toBe(
      `/etc/passwd\n/\n../../../../..\n${repo.path}\n`,
    );

    const forked = await call("session_fork", {});
    const forkId = (forked.forks as Array<{ session_id: string }>)[0]!.session_id;
    const fork = server.manager.get(forkId);
    expect(await sh(fork, "readlink passwd root up host-repo; cat a/b.txt")).toBe(
      `/etc/passwd\n/\n../../../../..\n${repo.path}\nchanged\n`,
    );
    // The host's repository has none of it.
    expect(readdirSync(repo.path).sort()).toEqual([".git", "a"]);
    expect(readFileSync(join(repo.path, "a/b.txt"), "utf8")).toBe("bee\n");
    expect(existsSync(join(repo.path, "passwd"))).toBe(false);
  });
});

describe("the restore in the box channel's program", () => {
  it("puts the index back in place of a link the agent left there, writing nothing through it; a HEAD made a link goes to the script", async () => {
    using repo = tempRepo({ "a.txt": "one\n", "b.txt": "bee\n" });
    await using session = await testSession(repo.path);
    await sh(session, "echo two > a.txt && git add a.txt && echo dirty > b.txt");
    await session.checkpoint("c");
    const entry = session.checkpoints.get("c");
    const restore = () =>
      restoreCheckpoint(session.box, entry.slot, { name: "c", commit: entry.commit, includeIgnored: false });
    // The index a link to a file of the agent's outside the workspace, and the files changed.
    await sh(
      session,
      "echo victim > /tmp/victim && rm .git/index && ln -s /tmp/victim .git/index && echo three > a.txt && rm b.txt",
    );
    const first = await restore();
    expect(first.byChannel).toBe(true);
    expect(
      await sh(
        session,
        "cat /tmp/victim; test ! -L .git/index && echo plain; cat a.txt b.txt; git show :a.txt",
      ),
    ).toBe("victim\nplain\ntwo\ndirty\ntwo\n");
    expect(await sh(session, "git status --porcelain; ls .git | grep -c drydock || true")).toBe(
      "M  a.txt\n M b.txt\n0\n",
    );
    // HEAD a link (to its branch, as git once made it): not a plain restore's to read; the script
    // restores, with the same answer.
    await sh(session, 'b=$(git symbolic-ref HEAD) && ln -sfn "$b" .git/HEAD && echo four > a.txt');
    const second = await restore();
    expect(second).toEqual({ files: 1, byChannel: false });
    expect(await sh(session, "cat a.txt; git status --porcelain")).toBe("two\nM  a.txt\n M b.txt\n");
  });
});

describe("a fork's export by the box channel's program", () => {
  it("is the script's, byte for byte: the base, the commit for forks, the pack; with an index that is not plain too", async () => {
    using repo = tempRepo({ "a.txt": "one\n", "b/c.txt": "see\n" });
    await using session = await testSession(repo.path);
    const have = (await sh(session, "git rev-parse HEAD")).trim();
    const both = async (name: string, byChannel = true) => {
      const entry = session.checkpoints.get(name);
      const program = await exportCheckpoint(session.box, entry.slot, {
        name,
        commit: entry.commit,
        baseCommit: session.baseCommit,
        includeIgnored: false,
        have: [have, "not-an-id"],
        maxBytes: 1 << 30,
      });
      const script = await boxSh(session.box, CHECKPOINT_SCRIPT, ["export", entry.slot, entry.commit, "0"], {
        stdin: Buffer.from(`${have}\nnot-an-id\n`),
        maxOutputBytes: 1 << 30,
      });
      expect(script.exitCode, script.stderr.toString()).toBe(0);
      expect(program.byChannel).toBe(byChannel);
      const made = Buffer.concat([Buffer.from(`${program.baseRaw}\n${program.commit}\n`), program.pack!]);
      expect(made.equals(script.stdout)).toBe(true);
      return program.commit === entry.commit;
    };
    // A plain index: the commit for forks carries it as a delta.
    await sh(session, "echo two > a.txt && git add a.txt && echo new > n.txt && git checkout -qb side");
    await session.checkpoint("plain");
    expect(await both("plain")).toBe(false);
    // An intent-to-add entry: the index travels whole, in the checkpoint's own commit.
    await sh(session, "echo later > later.txt && git add -N later.txt");
    await session.checkpoint("intent");
    expect(await both("intent")).toBe(true);
    // A split index: part of its entries are in .git/sharedindex.*, which the script's git reads
    // and the box's program does not; the script decides, and finds it plain.
    await sh(
      session,
      'git reset -q later.txt && git update-index --split-index && test -n "$(ls .git/sharedindex.*)"',
    );
    await session.checkpoint("split");
    expect(await both("split", false)).toBe(false);
  });
});

describe("paths an agent names to fool git", () => {
  it("are only paths to a restore: wildcards, pathspec magic, option-like and newline names", async () => {
    using repo = tempRepo({ "a.txt": "one\n", "b/c.txt": "see\n", "-q": "dash\n" });
    await using drydock = await inMemoryDrydock({ repo: repo.path, pool: { size: 0 } });
    const { client, server } = drydock;
    const call = async (name: string, args: Record<string, unknown> = {}) =>
      ok(await client.callTool({ name, arguments: args }));
    await call("bash", { command: "echo two > a.txt" });
    await call("session_checkpoint", { name: "before" });
    const session = server.manager.list()[0]!;
    // Made after the checkpoint: a restore removes exactly these. Read as pathspecs, "*" and
    // ":(glob)**" would name every file, and "--pathspec-from-file=x" would be an option.
    await sh(
      session,
      "touch -- '*' ':(glob)**' ':(top)' '--pathspec-from-file=x' \"$(printf 'new\\nline')\" && echo changed > ./-q" +
        // Directories named like bash's whole-array subscripts, and a file turned into a directory.
        " && mkdir '@' '[a]' && touch '@/x' '[a]/y' && rm b/c.txt && mkdir b/c.txt && echo in > b/c.txt/inner",
    );
    const restored = await call("session_restore", { name: "before" });
    expect(restored.changed_files).toBe(10);
    expect(await sh(session, "ls -A | LC_ALL=C sort; cat a.txt b/c.txt ./-q")).toBe(
      "-q\n.git\na.txt\nb\ntwo\nsee\ndash\n",
    );
    expect(await sh(session, "git status --porcelain")).toBe(" M a.txt\n");
  });
});

describe("refs an agent turns symbolic after a checkpoint", () => {
  it("are put back as the refs they were, never written through to the ref they name", async () => {
    using repo = tempRepo({ "a.txt": "one\n" });
    await using drydock = await inMemoryDrydock({ repo: repo.path, pool: { size: 0 } });
    const { client, server } = drydock;
    const call = async (name: string, args: Record<string, unknown> = {}) =>
      ok(await client.callTool({ name, arguments: args }));
    await call("bash", {
      command: "git branch side && git tag t && echo two > a.txt && git commit -qam two && git branch gone",
    });
    const session = server.manager.list()[0]!;
    const refs = "git for-each-ref --format='%(refname) %(objectname) %(symref)' refs/heads refs/tags";
    await call("session_checkpoint", { name: "before" });
    const before = await sh(session, refs);
    // side and the tag now name main (a restore that updates them through the link moves main);
    // gone names a ref that is not there; main moves on.
    await sh(
      session,
      "git symbolic-ref refs/heads/side refs/heads/main && git symbolic-ref refs/tags/t refs/heads/main" +
        " && git symbolic-ref refs/heads/gone refs/heads/nothing-here && echo three > a.txt && git commit -qam three",
    );
    await call("session_restore", { name: "before" });
    expect(await sh(session, refs)).toBe(before);
    expect(await sh(session, "git log --format=%s main; cat a.txt; git status --porcelain")).toBe(
      "two\ninitial\ntwo\n",
    );
  });
});

describe("checkpoint limits", () => {
  it("refuses a checkpoint over the byte limit and past the count, saving nothing", async () => {
    using repo = tempRepo({ "a.txt": "one\n" });
    await using drydock = await inMemoryDrydock({
      repo: repo.path,
      pool: { size: 0 },
      sessionOptions: { checkpointMaxBytes: 200_000, maxCheckpoints: 2 },
    });
    const { client } = drydock;
    const call = (name: string, args: Record<string, unknown> = {}) =>
      client.callTool({ name, arguments: args });
    ok(await call("bash", { command: "head -c 300000 /dev/urandom > big.bin" }));
    expect(failure(await call("session_checkpoint", { name: "big" }))).toMatch(
      /^checkpoint "big" would hold 3\d\d,\d{3} bytes \(1 changed files\), over the limit of 200,000 bytes per checkpoint; nothing was saved/,
    );
    ok(await call("bash", { command: "rm big.bin" }));
    ok(await call("session_checkpoint", { name: "one" }));
    ok(await call("session_checkpoint", { name: "two" }));
    expect(failure(await call("session_checkpoint", { name: "three" }))).toMatch(
      /^this session holds 2 checkpoints, the most it may \(2\); nothing was saved/,
    );
    // Saving under a name it has replaces it.
    ok(await call("session_checkpoint", { name: "two", message: "again" }));
    const listed = ok(await call("session_checkpoints"));
    expect(listed.checkpoints).toMatchObject([{ name: "one" }, { name: "two", message: "again" }]);
    expect(listed).toMatchObject({ max_checkpoints: 2, max_bytes: 200_000 });
  });
});

describe("session_fork admission and ownership", () => {
  it("refuses more forks than fit, whole, and another client's session as unknown", async () => {
    using repo = tempRepo({ "a.txt": "one\n" });
    await using drydock = await inMemoryDrydock({ repo: repo.path, pool: { size: 0 }, maxSessions: 3 });
    const { client, server } = drydock;
    const mine = ok(await client.callTool({ name: "session_create", arguments: {} })).session_id as string;
    expect(
      failure(await client.callTool({ name: "session_fork", arguments: { session_id: mine, n: 3 } })),
    ).toMatch(/^n: 3 forks asked for, but only 2 more sessions fit now; nothing was forked\./);
    expect(server.manager.list()).toHaveLength(1);
    expect(
      failure(await client.callTool({ name: "session_fork", arguments: { session_id: mine, n: 100 } })),
    ).toMatch(/n/);

    const other = await drydock.connect("other");
    for (const [tool, args] of [
      ["session_fork", { session_id: mine }],
      ["session_checkpoint", { session_id: mine, name: "x" }],
      ["session_restore", { session_id: mine, name: "x" }],
      ["session_checkpoints", { session_id: mine }],
    ] as const) {
      expect(failure(await other.callTool({ name: tool, arguments: args }))).toMatch(
        new RegExp(`^session ${mine} not found`),
      );
    }
    expect(server.manager.list()).toHaveLength(1);
  });
});

describe("the shell's state file in the box", () => {
  it("carries any bytes an agent exports or names its directory with, and a file the agent broke refuses the save, leaving nothing saved", async () => {
    using repo = tempRepo({ "a.txt": "one\n" });
    await using session = await testSession(repo.path);
    // A directory with a newline, a quote and a terminal escape in its name; exports holding bytes
    // that are not UTF-8, an escape, a newline and text that looks like the frame's own variable.
    await sh(
      session,
      [
        "mkdir -p $'/workspace/odd\\ndir \\'q\\e[31m' && cd $'/workspace/odd\\ndir \\'q\\e[31m'",
        "export CK_BIN=$'\\xff\\xfe\\e[2J' CK_ML=$'a\\ndeclare -x DRYDOCK_COMMAND=\"forged\"\\nb' CK_Q=\"it's \\$HOME\"",
      ].join(" && "),
    );
    const probe = "builtin printf '%s' \"$PWD\" | od -An -tx1; env | grep -a '^CK_' | sort | od -An -tx1";
    const before = await sh(session, probe);
    const saved = await session.checkpoint("odd");
    expect(saved.cwd).toBe("/workspace/odd\ndir 'q\u001b[31m");
    await sh(session, "unset CK_BIN CK_ML && export CK_Q=other CK_NEW=1 && cd /");
    expect(await sh(session, probe)).not.toBe(before);
    await session.restore("odd");
    expect(await sh(session, probe)).toBe(before);
    expect(await sh(session, "echo ${CK_NEW-unset}")).toBe("unset\n");

    // What the agent writes to the file between commands is overwritten by the next save or restore.
    await sh(session, "printf 'junk' > /tmp/.drydock-shell-state && cd /workspace");
    await session.restore("odd");
    expect(await sh(session, probe)).toBe(before);

    // A directory where the file goes: the save is refused, and no checkpoint is left in the box.
    const refs = () => sh(session, "git -C /workspace for-each-ref refs/drydock/checkpoints | wc -l");
    const count = await refs();
    await sh(session, "rm -f /tmp/.drydock-shell-state && mkdir /tmp/.drydock-shell-state");
    await expect(session.checkpoint("broken")).rejects.toThrow(/did not report its state/);
    expect(session.checkpoints.list().map((c) => c.name)).toEqual(["odd"]);
    expect(await refs()).toBe(count);
    await sh(session, "rmdir /tmp/.drydock-shell-state");

    // Exports over the limit: refused, naming it, and the checkpoint the script saved is dropped.
    // (Four of 100 KB: one over 128 KiB would stop every program the shell starts.)
    await sh(session, "for v in 1 2 3 4; do export CK_BIG$v=$(head -c 100000 /dev/zero | tr '\\0' x); done");
    await expect(session.checkpoint("big")).rejects.toThrow(/exported variables take more than 512 KiB/);
    expect(await refs()).toBe(count);
    expect(session.checkpoints.list().map((c) => c.name)).toEqual(["odd"]);
    expect(git(repo.path, "status", "--porcelain")).toBe("");
  });
});
