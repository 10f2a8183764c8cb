import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { UnsafeDiffError } from "../../../src/util/errors.js";
import { applyDiff } from "../../../src/workspace/apply-diff.js";
import { assertDiffIsSafe, ignoreRuleChanges } from "../../../src/workspace/diff-safety.js";
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

const RULES = "# secrets\n.env\n*.key\nbuild/\n";

describe("ignoreRuleChanges", () => {
  let scratch: Scratch;
  afterEach(() => scratch.dispose());

  /** The diff of what `edit` does in a box whose repository holds .gitignore (and sub/.gitignore). */
  function changesOf(edit: (box: string) => void) {
    scratch = new Scratch();
    const host = makeRepo(join(scratch.root, "repo"), {
      ".gitignore": RULES,
      "sub/.gitignore": "*.log\n",
      "README.md": "hi\n",
    });
    const box = cloneBox(host, join(scratch.root, "box"));
    edit(box);
    const diff = boxDiff(box);
    return ignoreRuleChanges(diff, assertDiffIsSafe(diff));
  }

  it("names a deleted or renamed-away .gitignore", () => {
    expect(changesOf((box) => git(box, "rm", "-q", ".gitignore"))).toEqual([
      { path: ".gitignore", how: "deleted" },
    ]);
    expect(changesOf((box) => git(box, "mv", "sub/.gitignore", "sub/ignore-rules.txt"))).toEqual([
      { path: "sub/.gitignore", how: 'renamed to "sub/ignore-rules.txt"' },
    ]);
  });

  it("names an edit that removes a pattern or adds an exception, in any .gitignore, new ones too", () => {
    expect(changesOf((box) => writeFiles(box, { ".gitignore": "# secrets\n*.key\nbuild/\n" }))).toEqual([
      { path: ".gitignore", how: "removes 1 pattern(s): .env" },
    ]);
    expect(changesOf((box) => writeFiles(box, { "sub/.gitignore": "*.log\n!keep.log\n" }))).toEqual([
      { path: "sub/.gitignore", how: "adds the exception(s) !keep.log" },
    ]);
    expect(changesOf((box) => writeFiles(box, { "deep/.gitignore": "!.env\n" }))).toEqual([
      { path: "deep/.gitignore", how: "adds the exception(s) !.env" },
    ]);
  });

  it("does not name an edit that only adds patterns or changes comments", () => {
    expect(
      changesOf((box) =>
        writeFiles(box, {
          ".gitignore": RULES.replace("# secrets", "# secrets and keys") + "*.pem\n",
          "other/.gitignore": "*.tmp\n",
          "README.md": "ignore rules: !not-a-rule\n",
        }),
      ),
    ).toEqual([]);
  });

  it("cannot be fooled through .git/info/exclude: a diff touching .git is refused outright", () => {
    const diff = [
      "diff --git a/.git/info/exclude b/.git/info/exclude",
      "index 0000000000000000000000000000000000000001..0000000000000000000000000000000000000002 100644",
      "--- a/.git/info/exclude",
      "+++ b/.git/info/exclude",
      "@@ -1 +1 @@",
      "-.env",
      "+# nothing",
      "",
    ].join("\n");
    expect(() => assertDiffIsSafe(diff)).toThrow(UnsafeDiffError);
  });
});

describe("applyDiff with ignore-rule changes", () => {
  let scratch: Scratch;
  afterEach(() => scratch.dispose());

  /**
   * The host's .gitignore is untracked (so the session's snapshot holds it) and hides a .env;
   * the box deletes the .gitignore.
   */
  function untrackedIgnoreDeletedInBox() {
    scratch = new Scratch();
    const host = makeRepo(join(scratch.root, "repo"), { "README.md": "hi\n" });
    const box = cloneBox(host, join(scratch.root, "box"));
    writeFiles(host, { ".gitignore": ".env\n", ".env": "API_KEY=secret\n" });
    // The snapshot the box starts from holds the untracked .gitignore, not what it ignores.
    writeFiles(box, { ".gitignore": ".env\n" });
    git(box, "add", ".gitignore");
    git(box, "commit", "-q", "-m", "snapshot");
    git(box, "rm", "-q", ".gitignore");
    writeFiles(box, { "README.md": "hi from the box\n" });
    return { host, diff: boxDiff(box) };
  }

  it("refuses it in worktree mode, changing nothing, and names the option that allows it", async () => {
    const { host, diff } = untrackedIgnoreDeletedInBox();
    const before = hostState(host);
    const error = await applyDiff(host, diff, { mode: "worktree" }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(UnsafeDiffError);
    expect((error as Error).message).toMatch(/\.gitignore deleted/);
    expect((error as Error).message).toMatch(/allow_ignore_changes.*--allow-ignore-changes/);
    expect(hostState(host)).toEqual(before);
    expect(git(host, "status", "--porcelain")).not.toMatch(/\.env/);
  });

  it("applies it in worktree mode when allowed, with a warning", async () => {
    const { host, diff } = untrackedIgnoreDeletedInBox();
    const result = await applyDiff(host, diff, { mode: "worktree", allowIgnoreChanges: true });
    expect(existsSync(join(host, ".gitignore"))).toBe(false);
    expect(readFileSync(join(host, "README.md"), "utf8")).toBe("hi from the box\n");
    expect(result.warnings).toEqual([expect.stringMatching(/ignore rules \(\.gitignore deleted\)/)]);
    // What the warning is about: the .env is no longer ignored.
    expect(git(host, "status", "--porcelain")).toMatch(/\?\? \.env/);
  });

  it("commits it on a branch with a warning (the working tree keeps its rules)", async () => {
    scratch = new Scratch();
    const host = makeRepo(join(scratch.root, "repo"), { ".gitignore": ".env\n", "README.md": "hi\n" });
    writeFileSync(join(host, ".env"), "API_KEY=secret\n");
    const box = cloneBox(host, join(scratch.root, "box"));
    writeFiles(box, { ".gitignore": "" });
    const base = git(host, "rev-parse", "HEAD").trim();
    const result = await applyDiff(host, boxDiff(box), { branch: "drydock/ig", baseCommit: base });
    expect(result.warnings).toEqual([expect.stringMatching(/\.gitignore removes 1 pattern\(s\): \.env/)]);
    expect(readFileSync(join(host, ".gitignore"), "utf8")).toBe(".env\n");
  });

  it("gives no warning for a diff that leaves ignore rules alone", async () => {
    scratch = new Scratch();
    const host = makeRepo(join(scratch.root, "repo"), { ".gitignore": ".env\n", "README.md": "hi\n" });
    const box = cloneBox(host, join(scratch.root, "box"));
    writeFiles(box, { "README.md": "changed\n", ".gitignore": ".env\n*.key\n" });
    const result = await applyDiff(host, boxDiff(box), { mode: "worktree" });
    expect(result.warnings).toBeUndefined();
    expect(readFileSync(join(host, ".gitignore"), "utf8")).toBe(".env\n*.key\n");
  });
});
