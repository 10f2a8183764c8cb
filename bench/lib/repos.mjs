// Synthetic git repositories for the benchmarks: N small source files in 100 directories,
// committed and packed (git gc), as a clone would be.
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";

const git = (cwd, ...args) =>
  execFileSync("git", ["-c", "user.name=bench", "-c", "user.email=bench@drydock.invalid", "-c", "gc.auto=0", ...args], {
    cwd,
    stdio: ["ignore", "pipe", "pipe"],
    maxBuffer: 1 << 28,
  });

/** A repository of `files` files (about 300 bytes each) under `root`; returns its path. */
export function makeRepo(root, files) {
  const dir = mkdtempSync(join(root, `repo-${files}-`));
  git(dir, "init", "-q", "-b", "main");
  const dirs = Math.min(100, files);
  for (let d = 0; d < dirs; d++) mkdirSync(join(dir, `pkg${d}`));
  for (let i = 0; i < files; i++) {
    const body = `// file ${i}\nexport function f${i}(x) {\n  return x + ${i};\n}\n`.repeat(4);
    writeFileSync(join(dir, `pkg${i % dirs}`, `mod${i}.js`), body);
  }
  git(dir, "add", "-A");
  git(dir, "commit", "-q", "-m", `${files} files`);
  git(dir, "gc", "-q");
  return dir;
}

/** A file of `lines` numbered lines. */
export function lineFile(lines) {
  return Array.from({ length: lines }, (_, i) => `line ${i + 1}: the quick brown fox jumps over the lazy dog`).join("\n") + "\n";
}

export function removeDir(dir) {
  rmSync(dir, { recursive: true, force: true });
}

export { git };
