import { randomBytes } from "node:crypto";
import { rename, rm, writeFile } from "node:fs/promises";

/**
 * Writes a file as a whole or not at all: into a temporary file beside it, then renamed over it.
 * A reader at the same moment sees the old bytes or the new, never an empty or half-written file
 * (a server's reaper reads session records while another server rewrites them).
 */
export async function writeFileAtomic(
  path: string,
  data: string | Uint8Array,
  options: { mode?: number } = {},
): Promise<void> {
  // Unique per write: two writes of one file at once in one process must not share a temporary.
  const temp = `${path}.tmp-${process.pid}-${randomBytes(4).toString("hex")}`;
  try {
    await writeFile(temp, data, { mode: options.mode });
    await rename(temp, path);
  } catch (error) {
    await rm(temp, { force: true }).catch(() => undefined);
    throw error;
  }
}
