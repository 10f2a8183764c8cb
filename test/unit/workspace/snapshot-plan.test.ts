/**
 * planDelta on real temp repositories: what a box prefilled with a commit still needs (paths to
 * send, paths to delete first), and undefined once the repository no longer has that commit.
 */
import { chmodSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { parseTreeStatus } from "../../../src/workspace/repo-status.js";
import { planDelta, planSnapshot } from "../../../src/workspace/snapshot-plan.js";
import { git, isolateGitConfig, makeRepo, Scratch } from "./host-repo-fixture.js";

describe("planDelta", () => {
  let scratch: Scratch;
  beforeAll(() => isolateGitConfig());
  afterEach(() => scratch.dispose());

  it("sends what differs from the commit and deletes first what is gone", async () => {
    scratch = new Scratch();
    const dir = makeRepo(join(scratch.root, "repo"), { "a.txt": "a\n", "b.txt": "b\n", "c.txt": "c\n" });
    const base = git(dir, "rev-parse", "HEAD").trim();
    editDeleteAndReplace(dir);
    writeFileSync(join(dir, "new.txt"), "new\n");
    const delta = await planDelta(dir, base);
    expect(delta?.files.sort()).toEqual(["a.txt", "c.txt/inside.txt", "new.txt"]);
    expect(delta?.deletes).toEqual(["b.txt", "c.txt"]);
    expect(delta?.untracked.sort()).toEqual(["c.txt/inside.txt", "new.txt"]);
  });

  it("a clean tree at the commit: nothing to send", async () => {
    scratch = new Scratch();
    const dir = makeRepo(join(scratch.root, "repo"), { "a.txt": "a\n" });
    const delta = await planDelta(dir, git(dir, "rev-parse", "HEAD").trim());
    expect(delta).toMatchObject({ files: [], deletes: [], untracked: [] });
  });

  it("undefined when the repository no longer has the commit", async () => {
    scratch = new Scratch();
    const dir = makeRepo(join(scratch.root, "repo"), { "a.txt": "a\n" });
    expect(await planDelta(dir, "0123456789abcdef0123456789abcdef01234567")).toBeUndefined();
  });

  it("a repository opened before is asked once (git status), and answers as when first opened", async () => {
    scratch = new Scratch();
    const dir = makeRepo(join(scratch.root, "repo"), {
      "a.txt": "a\n",
      "b.txt": "b\n",
      "c.txt": "c\n",
      "d.txt": "d\n",
      "name with spaces.txt": "s\n",
      "sub/e.txt": "e\n",
    });
    const base = git(dir, "rev-parse", "HEAD").trim();
    // Every kind of change: edited, deleted, a file become a directory, staged then reverted,
    // staged as new, untracked (also in a new directory and with spaces), ignored.
    editDeleteAndReplace(dir);
    writeFileSync(join(dir, "d.txt"), "staged\n");
    git(dir, "add", "d.txt");
    writeFileSync(join(dir, "d.txt"), "d\n");
    writeFileSync(join(dir, "staged-new.txt"), "n\n");
    git(dir, "add", "staged-new.txt");
    writeFileSync(join(dir, "name with spaces.txt"), "edited s\n");
    mkdirSync(join(dir, "fresh dir"));
    writeFileSync(join(dir, "fresh dir", "f.txt"), "f\n");
    writeFileSync(join(dir, ".gitignore"), "*.log\n");
    writeFileSync(join(dir, "build.log"), "ignored\n");
    chmodSync(join(dir, "sub", "e.txt"), 0o755);
    const calls = countGit(scratch.root);
    try {
      await checkBothWays(dir, base, calls);
    } finally {
      calls.restore();
    }
  });

  async function checkBothWays(dir: string, base: string, calls: ReturnType<typeof countGit>): Promise<void> {
    const first = await planDelta(dir, base);
    const firstCalls = calls.count();
    const second = await planDelta(dir, base);
    expect(calls.count() - firstCalls, "the second start asks one git").toBe(1);
    expect(firstCalls).toBeGreaterThan(1);
    const sorted = (d: typeof first) =>
      d && { ...d, files: [...d.files].sort(), untracked: [...d.untracked].sort() };
    expect(sorted(second)).toEqual(sorted(first));
    expect(sorted(first)?.files).toEqual([
      ".gitignore",
      "a.txt",
      "c.txt/inside.txt",
      "d.txt",
      "fresh dir/f.txt",
      "name with spaces.txt",
      "staged-new.txt",
      "sub/e.txt",
    ]);
    const snapshot = await planSnapshot(dir);
    expect(calls.count() - firstCalls).toBe(2);
    expect(snapshot.commit).toBe(base);
    expect([...snapshot.files].sort()).toEqual([...(first?.files ?? []), ...(first?.deletes ?? [])].sort());

    // A commit since the prefill: what it changed is sent too (asked against the base, not HEAD).
    writeFileSync(join(dir, "committed.txt"), "c\n");
    git(dir, "add", "committed.txt");
    git(dir, "commit", "-q", "-m", "since");
    expect((await planDelta(dir, base))?.files).toContain("committed.txt");
  }

  it("a repository made anew at the same path is opened again, not taken for the one before", async () => {
    scratch = new Scratch();
    const dir = makeRepo(join(scratch.root, "repo"), { "a.txt": "a\n" });
    const base = git(dir, "rev-parse", "HEAD").trim();
    expect(await planDelta(dir, base)).toMatchObject({ files: [], deletes: [] });
    rmSync(join(dir, ".git"), { recursive: true });
    makeRepo(dir, { "b.txt": "b\n" });
    expect(await planDelta(dir, base)).toBeUndefined();
    expect((await planSnapshot(dir)).commit).toBe(git(dir, "rev-parse", "HEAD").trim());
  });

  it("names that look like status lines or hold newlines are paths, however git status prints them", async () => {
    scratch = new Scratch();
    const odd = [
      "# branch.oid 0123456789abcdef0123456789abcdef01234567",
      "line\nbreak.txt",
      " lead.txt",
      "? q.txt",
    ];
    const dir = makeRepo(join(scratch.root, "repo"), Object.fromEntries(odd.map((name) => [name, "x\n"])));
    const base = git(dir, "rev-parse", "HEAD").trim();
    await planDelta(dir, base);
    for (const name of odd) writeFileSync(join(dir, name), "edited\n");
    for (const name of odd) writeFileSync(join(dir, `new ${name}`), "new\n");
    const delta = await planDelta(dir, base);
    expect([...(delta?.files ?? [])].sort()).toEqual([...odd, ...odd.map((n) => `new ${n}`)].sort());
    expect((await planSnapshot(dir)).commit).toBe(base);
  });

  it("reads git status's porcelain v2, and refuses what it does not know", () => {
    const out = Buffer.from(
      [
        "# branch.oid 0123456789abcdef0123456789abcdef01234567",
        "# branch.head main",
        "1 .M N... 100644 100644 100644 aaaa aaaa with space.txt",
        "u UU N... 100644 100644 100644 100644 a b c both ed.txt",
        "? new file.txt",
        "",
      ].join("\0"),
    );
    expect(parseTreeStatus(out)).toEqual({
      head: "0123456789abcdef0123456789abcdef01234567",
      changed: ["with space.txt", "both ed.txt"],
      untracked: ["new file.txt"],
    });
    expect(parseTreeStatus(Buffer.from("# branch.oid (initial)\0? a\0")).head).toBeNull();
    expect(() =>
      parseTreeStatus(Buffer.from("# branch.oid x\0" + "2 R. N... 1 1 1 a b R100 new\0old\0")),
    ).toThrow(/printed/);
    expect(() => parseTreeStatus(Buffer.from("? a\0"))).toThrow(/HEAD/);
  });
});

describe("untracked dependency trees in a plan", () => {
  let scratch: Scratch;
  beforeAll(() => isolateGitConfig());
  afterEach(() => scratch.dispose());

  /** A repository with a tracked file in node_modules, edited, and an installed node_modules and .venv. */
  function installed(): { dir: string; base: string } {
    scratch = new Scratch();
    const dir = makeRepo(join(scratch.root, "repo"), { "a.txt": "a\n", "node_modules/patched.js": "p\n" });
    const base = git(dir, "rev-parse", "HEAD").trim();
    writeFileSync(join(dir, "node_modules", "patched.js"), "edited\n");
    mkdirSync(join(dir, "node_modules", "dep"));
    writeFileSync(join(dir, "node_modules", "dep", "index.js"), "dep\n");
    mkdirSync(join(dir, ".venv"));
    writeFileSync(join(dir, ".venv", "pyvenv.cfg"), "home = /usr\n");
    writeFileSync(join(dir, "new.txt"), "new\n");
    return { dir, base };
  }

  it("a cold plan and a delta leave them out, keep the tracked file in one, and name them", async () => {
    const { dir, base } = installed();
    const trees = [
      { dir: ".venv/", files: 1 },
      { dir: "node_modules/", files: 1 },
    ];
    for (const plan of [await planSnapshot(dir), await planDelta(dir, base)]) {
      expect(plan?.files.sort()).toEqual(["new.txt", "node_modules/patched.js"]);
      expect(plan?.untracked).toEqual(["new.txt"]);
      expect(plan?.leftOut).toEqual({ trees, paths: [".venv/pyvenv.cfg", "node_modules/dep/index.js"] });
    }
  });

  it("with includeUntrackedDependencies, leave out nothing", async () => {
    const { dir, base } = installed();
    const options = { includeUntrackedDependencies: true };
    for (const plan of [await planSnapshot(dir, undefined, options), await planDelta(dir, base, options)]) {
      expect(plan?.files.sort()).toEqual([
        ".venv/pyvenv.cfg",
        "new.txt",
        "node_modules/dep/index.js",
        "node_modules/patched.js",
      ]);
      expect(plan?.leftOut).toBeUndefined();
    }
  });
});

/** a.txt edited, b.txt deleted, c.txt replaced by a directory holding inside.txt. */
function editDeleteAndReplace(dir: string): void {
  writeFileSync(join(dir, "a.txt"), "edited\n");
  rmSync(join(dir, "b.txt"));
  rmSync(join(dir, "c.txt"));
  mkdirSync(join(dir, "c.txt"));
  writeFileSync(join(dir, "c.txt", "inside.txt"), "now a directory\n");
}

/** Puts a git on PATH that counts its runs in a file, then runs the real one. */
function countGit(root: string): { count: () => number; restore: () => void } {
  const bin = join(root, "bin");
  const log = join(root, "git-calls");
  mkdirSync(bin, { recursive: true });
  const real = git(root, "--exec-path").trim() + "/git";
  writeFileSync(join(bin, "git"), `#!/bin/sh\necho x >> ${log}\nexec ${real} "$@"\n`, { mode: 0o755 });
  writeFileSync(log, "");
  const path = process.env.PATH;
  process.env.PATH = `${bin}:${path}`;
  return {
    count: () => readFileSync(log, "utf8").split("\n").length - 1,
    restore: () => {
      process.env.PATH = path;
    },
  };
}
