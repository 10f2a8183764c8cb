/** Hand-written diff sections, for the diffs a compromised box could send that git would never write. */
import { quoteGitPath } from "../../../src/workspace/git-quoted-path.js";

const NO_EOL = "\\ No newline at end of file\n";

function header(oldPath: string, newPath = oldPath): string {
  return `diff --git ${quoteGitPath(`a/${oldPath}`)} ${quoteGitPath(`b/${newPath}`)}\n`;
}

/** A new file (or symlink, with mode 120000) holding `content` without a final newline. */
export function addFile(path: string, content = "x", mode = "100644"): string {
  const lines = content.split("\n");
  return (
    header(path) +
    `new file mode ${mode}\n` +
    `index 0000000000000000000000000000000000000000..1111111111111111111111111111111111111111\n` +
    `--- /dev/null\n+++ ${quoteGitPath(`b/${path}`)}\n@@ -0,0 +1${lines.length === 1 ? "" : `,${lines.length}`} @@\n` +
    lines.map((line) => `+${line}\n`).join("") +
    NO_EOL
  );
}

/** An in-place edit of a one-line file; `mode` goes on the index line as git writes it. */
export function editFile(path: string, before: string, after: string, mode = "100644"): string {
  return (
    header(path) +
    `index 2222222222222222222222222222222222222222..3333333333333333333333333333333333333333 ${mode}\n` +
    `--- ${quoteGitPath(`a/${path}`)}\n+++ ${quoteGitPath(`b/${path}`)}\n` +
    `@@ -1 +1 @@\n-${before}\n${NO_EOL}+${after}\n${NO_EOL}`
  );
}

/** A pure rename (100% similar, no content lines), as git writes one. */
export function renameFile(from: string, to: string): string {
  return (
    header(from, to) +
    `similarity index 100%\nrename from ${quoteGitPath(from)}\nrename to ${quoteGitPath(to)}\n`
  );
}

/** A pure copy, as `git diff -C` writes one. */
export function copyFile(from: string, to: string): string {
  return (
    header(from, to) + `similarity index 100%\ncopy from ${quoteGitPath(from)}\ncopy to ${quoteGitPath(to)}\n`
  );
}
