import { existsSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

/** The directory holding package.json, found from this file whether it runs from src/ or dist/. */
export function projectRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  while (!existsSync(join(dir, "package.json"))) {
    const up = dirname(dir);
    if (up === dir)
      throw new Error("drydock's package.json was not found above " + fileURLToPath(import.meta.url));
    dir = up;
  }
  return dir;
}

/** drydock's version, from its package.json. */
export function drydockVersion(): string {
  const text = readFileSync(join(projectRoot(), "package.json"), "utf8");
  return (JSON.parse(text) as { version: string }).version;
}
