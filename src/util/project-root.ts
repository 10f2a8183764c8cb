import { existsSync } from "node:fs";
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
