/**
 * A session's audit log on the host: one JSON line per tool call, model request, person's command
 * and lifecycle event, in `<state dir>/audit/<session>.jsonl` (directory 0700, files 0600). It sits
 * beside the task stacks, outside the gateway directory that is the only host path a box sees, so
 * nothing in the box can write it. Each line is one append, written before the call that made it
 * returns: a crash loses nothing already logged. Strings are redacted as every log is.
 */
import { appendFileSync, chmodSync, mkdirSync } from "node:fs";
import { open, readdir, rm, stat } from "node:fs/promises";
import { join } from "node:path";
import { logger, redactLogText } from "../util/log.js";
import { stateDir } from "../util/paths.js";
import { parseAuditLine, type AuditEntry } from "./audit-entry.js";

const log = logger("audit");

const SESSION_ID = /^[0-9a-f]{12}$/;

export function auditDir(state: string = stateDir()): string {
  return join(state, "audit");
}

/** The log file of a session (12 hex digits); undefined for any other id. */
export function auditLogPath(sessionId: string, state: string = stateDir()): string | undefined {
  return SESSION_ID.test(sessionId) ? join(auditDir(state), `${sessionId}.jsonl`) : undefined;
}

const preparedDirs = new Set<string>();
const warned = new Set<string>();

/**
 * Appends one entry to its session's log, redacted. Never throws: a log that cannot be written is
 * a warning (once per session), not a failed tool call.
 */
export function appendAuditEntry(entry: AuditEntry, state: string = stateDir()): void {
  const path = auditLogPath(entry.session, state);
  if (path === undefined) return;
  try {
    const dir = auditDir(state);
    if (!preparedDirs.has(dir)) {
      mkdirSync(dir, { recursive: true, mode: 0o700 });
      // A directory made before (or by an older drydock) keeps whatever mode it had: tighten it.
      chmodSync(dir, 0o700);
      preparedDirs.add(dir);
    }
    appendFileSync(path, JSON.stringify(redactStrings(entry)) + "\n", { mode: 0o600, flag: "a" });
  } catch (error) {
    preparedDirs.delete(auditDir(state));
    if (warned.has(path)) return;
    warned.add(path);
    log.warn(`session ${entry.session}: could not write its audit log ${path}: ${(error as Error).message}`);
  }
}

/** Every string in a value passed through the log redactors. */
function redactStrings<T>(value: T): T {
  if (typeof value === "string") return redactLogText(value) as T;
  if (Array.isArray(value)) return value.map((v: unknown) => redactStrings(v)) as T;
  if (value !== null && typeof value === "object") {
    return Object.fromEntries(
      Object.entries(value as Record<string, unknown>).map(([k, v]) => [k, redactStrings(v)]),
    ) as T;
  }
  return value;
}

export interface AuditRead {
  entries: AuditEntry[];
  /** Where the next read starts: the end of the last whole line. */
  offset: number;
}

/**
 * The entries of a log from byte `offset` on (a torn line at the end waits for its newline);
 * none when the file does not exist.
 */
export async function readAuditLog(path: string, offset = 0): Promise<AuditRead> {
  let text: Buffer;
  try {
    const handle = await open(path, "r");
    try {
      const { size } = await handle.stat();
      if (size <= offset) return { entries: [], offset };
      text = Buffer.alloc(size - offset);
      const { bytesRead } = await handle.read(text, 0, text.length, offset);
      text = text.subarray(0, bytesRead);
    } finally {
      await handle.close();
    }
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return { entries: [], offset };
    throw error;
  }
  const end = text.lastIndexOf(0x0a);
  if (end < 0) return { entries: [], offset };
  const entries = text
    .subarray(0, end)
    .toString("utf8")
    .split("\n")
    .map(parseAuditLine)
    .filter((e): e is AuditEntry => e !== undefined);
  return { entries, offset: offset + end + 1 };
}

/** The sessions that have an audit log in this state directory. */
export async function auditedSessions(state: string = stateDir()): Promise<string[]> {
  const names = await readdir(auditDir(state)).catch(() => [] as string[]);
  return names
    .filter((n) => n.endsWith(".jsonl"))
    .map((n) => n.slice(0, -".jsonl".length))
    .filter((id) => SESSION_ID.test(id));
}

/**
 * Removes the logs (and kept last diffs) of sessions that have no box (their records went with the box), last written more than
 * `olderThanMs` ago; a session in `withBox` keeps its log whatever its age. Returns their ids.
 */
export async function pruneAuditLogs(
  olderThanMs: number,
  withBox: ReadonlySet<string>,
  state: string = stateDir(),
  now = Date.now(),
): Promise<string[]> {
  const removed: string[] = [];
  for (const id of await auditedSessions(state)) {
    if (withBox.has(id)) continue;
    const path = auditLogPath(id, state)!;
    const written = await stat(path).then(
      (s) => s.mtimeMs,
      () => undefined,
    );
    if (written === undefined || now - written < olderThanMs) continue;
    await rm(path, { force: true });
    // The session's last diff (final-diff.ts) goes with its log.
    await rm(join(auditDir(state), `${id}.diff`), { force: true });
    removed.push(id);
  }
  return removed;
}
