/**
 * What `drydock sessions list` shows that a box's labels cannot hold: the repository a session
 * copied in (a warm box is made before anyone knows which). One small JSON file per session, in
 * the state directory, outside the directory the box sees; removed with the session or by prune.
 */
import { mkdir, readFile, readdir, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { stateDir } from "../util/paths.js";

export interface SessionRecord {
  /** The host repository's top directory. */
  repo: string;
}

const ID = /^[0-9a-f]{12}$/;

export function sessionRecordsDir(state: string = stateDir()): string {
  return join(state, "sessions");
}

export async function writeSessionRecord(sessionId: string, record: SessionRecord): Promise<void> {
  const dir = sessionRecordsDir();
  await mkdir(dir, { recursive: true, mode: 0o700 });
  await writeFile(join(dir, `${sessionId}.json`), JSON.stringify(record) + "\n", { mode: 0o600 });
}

/** The record of a session made with the given state directory, or undefined (none, unreadable). */
export async function readSessionRecord(
  sessionId: string,
  state: string = stateDir(),
): Promise<SessionRecord | undefined> {
  if (!ID.test(sessionId)) return undefined;
  try {
    const parsed = JSON.parse(
      await readFile(join(sessionRecordsDir(state), `${sessionId}.json`), "utf8"),
    ) as unknown;
    const repo = (parsed as { repo?: unknown }).repo;
    return typeof repo === "string" ? { repo } : undefined;
  } catch {
    return undefined;
  }
}

export async function removeSessionRecord(sessionId: string): Promise<void> {
  if (!ID.test(sessionId)) return;
  await rm(join(sessionRecordsDir(), `${sessionId}.json`), { force: true });
}

/** The session ids that have a record in this state directory. */
export async function recordedSessions(): Promise<string[]> {
  const names = await readdir(sessionRecordsDir()).catch(() => [] as string[]);
  return names
    .filter((n) => n.endsWith(".json"))
    .map((n) => n.slice(0, -5))
    .filter((id) => ID.test(id));
}
