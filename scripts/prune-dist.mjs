// Removes from dist/ what no source in src/ builds any more (a renamed or deleted module, source
// maps of an earlier build), so a package packed from a working copy ships only what tsc made
// from today's sources. Run after the build (npm's prepack does both).
import { existsSync, readdirSync, rmSync } from "node:fs";
import { join, relative } from "node:path";

const root = new URL("..", import.meta.url).pathname;
const dist = join(root, "dist");
const src = join(root, "src");
const built = /\.(d\.ts|js|js\.map|d\.ts\.map)$/;

let removed = 0;
function prune(dir) {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) {
      prune(path);
      if (readdirSync(path).length === 0) rmSync(path, { recursive: true });
      continue;
    }
    const source = join(src, relative(dist, path)).replace(built, ".ts");
    if (entry.name.endsWith(".map") || !built.test(entry.name) || !existsSync(source)) {
      rmSync(path);
      removed++;
    }
  }
}
if (existsSync(dist)) prune(dist);
process.stderr.write(`[prune-dist] removed ${removed} file(s) no source builds\n`);
