/**
 * A session's last diff, kept on the host once its box is gone: `<state dir>/audit/<session>.diff`
 * (mode 0600, beside its audit log, in the same 0700 directory), up to 2 MiB. A longer diff keeps
 * its first whole lines up to the cap and ends with a line saying where it was cut, so nobody
 * applies it believing it whole. Written when the server removes the session; removed with its log.
 */
import { mkdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import { stateDir } from "../util/paths.js";
import { writeFileAtomic } from "../util/write-atomic.js";
import { auditDir } from "./audit-log.js";

/** The most of a diff kept after its session ends. */
export const MAX_FINAL_DIFF_BYTES = 2 * 1024 * 1024;

const SESSION_ID = /^[0-9a-f]{12}$/;

/** The note a cut diff ends with. */
const CUT_NOTE = /\n# drydock: cut at \d+ of (\d+) bytes[^\n]*\n$/;

export function finalDiffPath(sessionId: string, state: string = stateDir()): string | undefined {
  return SESSION_ID.test(sessionId) ? join(auditDir(state), `${sessionId}.diff`) : undefined;
}

/** The bytes to store: the diff, or its head cut at a line's end with a note saying so. */
export function finalDiffBytes(diff: Buffer, maxBytes = MAX_FINAL_DIFF_BYTES): Buffer {
  if (diff.length <= maxBytes) return diff;
  const lineEnd = diff.lastIndexOf(0x0a, maxBytes - 1);
  const head = diff.subarray(0, lineEnd < 0 ? 0 : lineEnd + 1);
  const note = `\n# drydock: cut at ${head.length} of ${diff.length} bytes (the whole diff was larger than ${maxBytes} bytes); this is not the whole diff and does not apply\n`;
  return Buffer.concat([head, Buffer.from(note)]);
}

/** Stores a session's last diff (mode 0600); returns how many bytes were kept. */
export async function saveFinalDiff(
  sessionId: string,
  diff: Buffer,
  state: string = stateDir(),
): Promise<{ path: string; bytes: number; cut: boolean }> {
  const path = finalDiffPath(sessionId, state);
  if (!path) throw new Error(`not a session id: ${sessionId}`);
  await mkdir(auditDir(state), { recursive: true, mode: 0o700 });
  const bytes = finalDiffBytes(diff);
  // Whole or not at all, beside and then over any file there (`sessions diff` may read it now).
  // A new file each time: none there before lends it a wider mode.
  await writeFileAtomic(path, bytes, { mode: 0o600 });
  return { path, bytes: bytes.length, cut: bytes.length !== diff.length };
}

export interface FinalDiff {
  diff: Buffer;
  /** The whole diff's size, when what was kept is its head. */
  cutFromBytes?: number;
}

/** A session's stored last diff; undefined when none was kept. */
export async function readFinalDiff(
  sessionId: string,
  state: string = stateDir(),
): Promise<FinalDiff | undefined> {
  const path = finalDiffPath(sessionId, state);
  if (!path) return undefined;
  const diff = await readFile(path).catch((error: NodeJS.ErrnoException) => {
    if (error.code === "ENOENT") return undefined;
    throw error;
  });
  if (!diff) return undefined;
  const cut = CUT_NOTE.exec(diff.subarray(Math.max(0, diff.length - 400)).toString("utf8"));
  return cut ? { diff, cutFromBytes: Number(cut[1]) } : { diff };
}
