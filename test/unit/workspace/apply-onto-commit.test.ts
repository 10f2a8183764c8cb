/**
 * A session that started from uncommitted work: its branch holds what the user committed plus the
 * session's change, never the uncommitted edits or untracked files (a node_modules) it started from.
 */
import { join } from "node:path";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { applyDiff } from "../../../src/workspace/apply-diff.js";
import { snapshotCommit } from "../../../src/workspace/snapshot-commit.js";
import { ApplyConflictError } from "../../../src/util/errors.js";
import {
  boxDiff,
  cloneBox,
  git,
  hostState,
  isolateGitConfig,
  makeRepo,
  Scratch,
  writeFiles,
} from "./host-repo-fixture.js";

beforeAll(isolateGitConfig);

const lines = (edit: Record<number, string> = {}) =>
  Array.from({ length: 12 }, (_, i) => edit[i] ?? `line ${i}`).join("\n") + "\n";

/** What the user had and had not committed when the session started. */
const UNCOMMITTED = {
  "f.txt": lines({ 2: "line 2, edited by the user" }),
  "notes.txt": "untracked notes\n",
  "node_modules/dep/index.js": "module.exports = 1;\n",
};

describe("a branch apply of a session that started from uncommitted changes", () => {
  let scratch: Scratch;
  afterEach(() => scratch.dispose());

  /** The host with uncommitted work, its snapshot, and a box that starts from the snapshot's files. */
  async function setup(edit: (box: string) => void) {
    scratch = new Scratch();
    const host = makeRepo(join(scratch.root, "repo"), { "f.txt": lines(), "README.md": "hi\n" });
    const committed = git(host, "rev-parse", "HEAD").trim();
    const box = cloneBox(host, join(scratch.root, "box"));
    writeFiles(host, UNCOMMITTED);
    const snapshot = await snapshotCommit(host);
    writeFiles(box, UNCOMMITTED);
    git(box, "add", "-A");
    git(box, "commit", "-qm", "the box's start");
    edit(box);
    return { host, committed, snapshot, diff: boxDiff(box) };
  }

  it("sits on the user's commit with only the session's change", async () => {
    const { host, committed, snapshot, diff } = await setup((box) =>
      writeFiles(box, {
        "f.txt": lines({ 2: "line 2, edited by the user", 9: "line 9, by the agent" }),
        "new.txt": "new\n",
      }),
    );
    const before = hostState(host);
    const result = await applyDiff(host, diff, { branch: "drydock/s1", baseCommit: snapshot });
    expect(git(host, "rev-parse", "drydock/s1^").trim()).toBe(committed);
    expect(result.baseCommit).toBe(committed);
    expect(git(host, "ls-tree", "-r", "--name-only", "drydock/s1").trim().split("\n")).toEqual([
      "README.md",
      "f.txt",
      "new.txt",
    ]);
    expect(git(host, "show", "drydock/s1:f.txt")).toBe(lines({ 9: "line 9, by the agent" }));
    expect(result.warnings?.join("\n")).toMatch(/sits on your last commit .*not in it/);
    // Nothing else of the host moved: the branch is the one new thing.
    expect(hostState(host)).toEqual({ ...before, refs: expect.any(String) });
  });

  it("refuses a change made on lines the user had not committed, naming the file", async () => {
    const { host, snapshot, diff } = await setup((box) =>
      writeFiles(box, { "f.txt": lines({ 2: "line 2, rewritten by the agent" }) }),
    );
    const error = await applyDiff(host, diff, { branch: "drydock/s2", baseCommit: snapshot }).catch(
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(ApplyConflictError);
    expect((error as ApplyConflictError).files).toEqual(["f.txt"]);
    expect((error as Error).message).toMatch(/mode "worktree"/);
    expect(git(host, "branch", "--list", "drydock/s2").trim()).toBe("");
  });

  it("drops the deletion of a file the user never committed: the branch never had it", async () => {
    scratch = new Scratch();
    const host = makeRepo(join(scratch.root, "repo"), { "nz.txt": "tracked\n", "README.md": "hi\n" });
    const committed = git(host, "rev-parse", "HEAD").trim();
    const box = cloneBox(host, join(scratch.root, "box"));
    // An untracked file whose name is a wildcard matching the tracked one.
    const untracked = { "n*.txt": "untracked\n", ".gitignore": ".env\n" };
    writeFiles(host, untracked);
    const snapshot = await snapshotCommit(host);
    writeFiles(box, untracked);
    git(box, "add", "-A");
    git(box, "commit", "-qm", "the box's start");
    git(box, "rm", "-q", "n*.txt", ".gitignore");
    writeFiles(box, { "nz.txt": "tracked, edited\n" });
    const result = await applyDiff(host, boxDiff(box), { branch: "drydock/s4", baseCommit: snapshot });
    expect(git(host, "rev-parse", "drydock/s4^").trim()).toBe(committed);
    expect(git(host, "show", "drydock/s4:nz.txt")).toBe("tracked, edited\n");
    expect(git(host, "ls-tree", "-r", "--name-only", "drydock/s4").trim().split("\n")).toEqual([
      "README.md",
      "nz.txt",
    ]);
    // The deleted ignore file is still a warning, as on any branch.
    expect(result.warnings?.join("\n")).toMatch(/\.gitignore deleted/);
  });

  it("refuses a change to a file the user never committed, naming it", async () => {
    const { host, snapshot, diff } = await setup((box) =>
      writeFiles(box, { "notes.txt": "notes, edited\n" }),
    );
    const error = await applyDiff(host, diff, { branch: "drydock/s3", baseCommit: snapshot }).catch(
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(ApplyConflictError);
    expect((error as ApplyConflictError).files).toEqual(["notes.txt"]);
  });
});
