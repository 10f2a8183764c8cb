/**
 * What the `drydock sessions` verbs need that a box's labels cannot hold: the repository a session
 * copied in (a warm box is made before anyone knows which), the commits its diff applies to, its
 * image and limits. One small JSON file per session, in the state directory, outside the directory
 * the box sees; removed with the session or by prune (kept with `--keep-sessions`).
 */
import { lstat, mkdir, readFile, readdir, rm } from "node:fs/promises";
import { join } from "node:path";
import { stateDir } from "../util/paths.js";
import { writeFileAtomic } from "../util/write-atomic.js";
import type { Session } from "./session.js";

export interface SessionRecord {
  /** The host repository's top directory. */
  repo: string;
  /** The commit the box's diff is taken against (in the box). */
  base_commit?: string;
  /** The host commit the diff applies to: HEAD, the ref, or a commit of a dirty working tree. */
  host_base_commit?: string;
  image?: string;
  box?: string;
  created_at?: string;
  limits?: Record<string, number | string>;
  /** Hosts the box may reach over HTTPS; empty: none. */
  egress?: string[];
  /** True when the box came from the warm pool. */
  warm?: boolean;
  /** A kept session (`--keep-sessions`): until when (ISO time) a dead server's box is left running. */
  kept_until?: string;
  /**
   * The drydock process that adopted the kept box after its first server died (host/pid/start):
   * while it lives the box is its, whatever the box's owner label says (labels cannot change).
   */
  adopted_by?: string;
  /**
   * SHA-256 (hex) of the session's secret (session-secret.ts), which a client must show to take
   * up the session once no client holds it; the secret itself is never stored.
   */
  secret_sha256?: string;
}

/** The record of a session as it starts, with the hash of its secret when it was given one. */
export function sessionRecordOf(session: Session, keptUntil?: number, secretSha256?: string): SessionRecord {
  const info = session.info();
  return {
    repo: info.repo,
    base_commit: info.base_commit,
    host_base_commit: session.hostBaseCommit,
    image: info.image,
    box: info.box,
    created_at: info.created_at,
    limits: { ...info.limits },
    egress: info.egress.allowlist,
    warm: session.warm,
    ...(keptUntil === undefined ? {} : { kept_until: new Date(keptUntil).toISOString() }),
    ...(secretSha256 === undefined ? {} : { secret_sha256: secretSha256 }),
  };
}

const ID = /^[0-9a-f]{12}$/;

export function sessionRecordsDir(state: string = stateDir()): string {
  return join(state, "sessions");
}

export async function writeSessionRecord(sessionId: string, record: SessionRecord): Promise<void> {
  const dir = sessionRecordsDir();
  await mkdir(dir, { recursive: true, mode: 0o700 });
  // Whole or not at all: a reaper reading it mid-write would take a kept session for one without a
  // record, and remove its box.
  await writeFileAtomic(join(dir, `${sessionId}.json`), JSON.stringify(record) + "\n", { mode: 0o600 });
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
    const record = parsed as Partial<SessionRecord> | null;
    return typeof record?.repo === "string" ? (record as SessionRecord) : undefined;
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

/** A record's temporary file (util/write-atomic.ts): `<id>.json.tmp-<pid>-<8 hex>`. */
const RECORD_TEMP = /^[0-9a-f]{12}\.json\.tmp-\d+-[0-9a-f]{8}$/;

/**
 * Removes the temporary files of record writes that never finished (a process killed between
 * writing one and renaming it over its record), once older than `graceMs`: a write takes a few
 * milliseconds, so one that old is nobody's. Listings read only `<id>.json`, so these are only
 * clutter. Only names of that exact form are touched, and only files or links (a link itself,
 * never what it names); anything else there is left. Answers how many it removed.
 */
export async function removeStaleRecordTemps(graceMs: number, now = Date.now()): Promise<number> {
  const dir = sessionRecordsDir();
  const names = await readdir(dir).catch(() => [] as string[]);
  let removed = 0;
  for (const name of names) {
    if (!RECORD_TEMP.test(name)) continue;
    const path = join(dir, name);
    const info = await lstat(path).catch(() => undefined);
    if (!info || !(info.isFile() || info.isSymbolicLink()) || now - info.mtimeMs < graceMs) continue;
    await rm(path, { force: true }).then(
      () => removed++,
      () => undefined,
    );
  }
  return removed;
}
