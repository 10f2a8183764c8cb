import { join } from "node:path";
import fc from "fast-check";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { quoteGitPath, unquoteWhole } from "../../../src/workspace/git-quoted-path.js";
import { parseGitDiff } from "../../../src/workspace/parse-git-diff.js";
import { UnsafeDiffError } from "../../../src/util/errors.js";
import { addFile } from "./diff-builders.js";
import {
  boxDiff,
  cloneBox,
  git,
  isolateGitConfig,
  makeRepo,
  Scratch,
  writeFiles,
} from "./host-repo-fixture.js";

beforeAll(isolateGitConfig);

describe("parseGitDiff", () => {
  let scratch: Scratch;
  afterEach(() => scratch.dispose());

  it("reads every kind of change git writes", () => {
    scratch = new Scratch();
    const lines = Array.from({ length: 20 }, (_, i) => `line ${i}`).join("\n") + "\n";
    const host = makeRepo(join(scratch.root, "repo"), {
      "old.txt": lines,
      "gone.txt": "bye\n",
      "run.sh": "#!/bin/sh\n",
      "img.bin": Buffer.from([0, 1, 2, 3, 255]),
      link: { symlink: "old.txt" },
    });
    const box = cloneBox(host, join(scratch.root, "box"));
    git(box, "mv", "old.txt", "new.txt");
    writeFiles(box, {
      "new.txt": lines.replace("line 3", "line three"),
      "img.bin": Buffer.from([0, 1, 2, 4, 255, 0]),
      "ä b.txt": "unicode\n",
      "sp ace.txt": "spaced\n",
      link: { symlink: "new.txt" },
      'say "hi".txt': "quoted\n",
    });
    git(box, "rm", "-q", "gone.txt");
    git(box, "update-index", "--chmod=+x", "run.sh");
    writeFiles(box, { "run.sh": { exec: "#!/bin/sh\n" } });

    const changes = parseGitDiff(boxDiff(box));
    const byPath = new Map(changes.map((c) => [c.path, c]));
    expect(byPath.get("new.txt")).toMatchObject({
      status: "renamed",
      oldPath: "old.txt",
      insertions: 1,
      deletions: 1,
    });
    expect(byPath.get("new.txt")?.similarity).toBeGreaterThan(50);
    expect(byPath.get("gone.txt")).toMatchObject({ status: "deleted", oldMode: "100644" });
    expect(byPath.get("run.sh")).toMatchObject({ status: "modified", oldMode: "100644", newMode: "100755" });
    expect(byPath.get("img.bin")).toMatchObject({ status: "modified", binary: true });
    expect(byPath.get("ä b.txt")).toMatchObject({ status: "added", newMode: "100644" });
    expect(byPath.get("sp ace.txt")).toMatchObject({ status: "added" });
    expect(byPath.get('say "hi".txt')).toMatchObject({ status: "added" });
    expect(byPath.get("link")).toMatchObject({
      status: "modified",
      newMode: "120000",
      singleNewLine: "new.txt",
    });
    expect(changes.map((c) => c.path).sort()).toEqual(
      ["gone.txt", "img.bin", "link", "new.txt", "run.sh", 'say "hi".txt', "sp ace.txt", "ä b.txt"].sort(),
    );
  });

  it("reads a rename of a name with spaces from its rename lines", () => {
    const diff = "diff --git a/x b/y b/z b/w\nsimilarity index 100%\nrename from x b/y\nrename to z b/w\n";
    expect(parseGitDiff(diff)).toMatchObject([{ status: "renamed", oldPath: "x b/y", path: "z b/w" }]);
  });

  it("keeps content in any encoding byte for byte", () => {
    const latin1 = Buffer.concat([
      Buffer.from(
        "diff --git a/cafe.txt b/cafe.txt\nnew file mode 100644\n--- /dev/null\n+++ b/cafe.txt\n@@ -0,0 +1 @@\n+caf",
      ),
      Buffer.from([0xe9, 0x0a]),
    ]);
    expect(parseGitDiff(latin1)).toMatchObject([{ path: "cafe.txt", insertions: 1 }]);
  });

  it.each([
    ["text before the first header", "From: someone\n" + addFile("a.txt")],
    [
      "a traditional patch after a git one",
      addFile("a.txt") + "--- a/x\n+++ b/../../etc/passwd\n@@ -1 +1 @@\n-a\n+b\n",
    ],
    [
      "more hunk lines than the header says",
      addFile("a.txt").replace("\\ No newline at end of file\n", "+extra\n"),
    ],
    [
      "a hunk cut short",
      "diff --git a/a b/a\nindex 1111111..2222222 100644\n--- a/a\n+++ b/a\n@@ -1,2 +1,2 @@\n-a\n",
    ],
    ["an unknown header line", "diff --git a/a b/a\nold mode 100644\nsomething else\n"],
    ["a repeated header line", "diff --git a/a b/b\nrename from a\nrename from a\nrename to b\n"],
    ["a bad escape in a quoted path", 'diff --git "a/\\q" "b/\\q"\nnew file mode 100644\n'],
    ["a path without its a/ prefix", "diff --git x/a y/a\nnew file mode 100644\n"],
    ["---/+++ without a hunk", "diff --git a/a b/a\nindex 1111111..2222222 100644\n--- a/a\n+++ b/a\n"],
    [
      "/dev/null on a modified file",
      "diff --git a/a b/a\nindex 1111111..2222222 100644\n--- /dev/null\n+++ b/a\n@@ -0,0 +1 @@\n+x\n",
    ],
    [
      "garbage in binary data",
      "diff --git a/a b/a\nindex 1111111..2222222 100644\nGIT binary patch\nliteral 3\nnot base85 data\n\n",
    ],
    ["an old mode without a new one", "diff --git a/a b/a\nold mode 120000\n"],
    [
      "a mode on the index line and a mode line",
      "diff --git a/a b/a\nold mode 100644\nnew mode 100644\nindex 1111111..2222222 120000\n",
    ],
    [
      "an index mode on a new file",
      "diff --git a/a b/a\nnew file mode 100644\nindex 0000000..2222222 120000\n",
    ],
    ["a path that is not UTF-8", 'diff --git "a/\\377" "b/\\377"\nnew file mode 100644\n'],
  ])("refuses %s", (_what, diff) => {
    expect(() => parseGitDiff(diff)).toThrow(UnsafeDiffError);
  });

  it("reads an empty diff as no changes", () => {
    expect(parseGitDiff("")).toEqual([]);
  });
});

describe("git path quoting", () => {
  it("reads back what it quotes, byte for byte", () => {
    fc.assert(
      fc.property(fc.string({ unit: "binary" }), (path) => {
        const bytes = Buffer.from(path, "utf8").toString("latin1");
        expect(unquoteWhole(quoteGitPath(path))).toBe(bytes);
      }),
      { numRuns: 2000 },
    );
  });

  it("quotes like git does", () => {
    expect(quoteGitPath("a/ä b.txt")).toBe('"a/\\303\\244 b.txt"');
    expect(quoteGitPath("plain name.txt")).toBe("plain name.txt");
    expect(quoteGitPath('tab\t"q"')).toBe('"tab\\t\\"q\\""');
  });
});
