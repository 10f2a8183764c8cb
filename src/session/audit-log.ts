/**
 * A session's audit log on the host: one JSON line per tool call, model request, person's command
 * and lifecycle event, in `<state dir>/audit/<session>.jsonl` (directory 0700, files 0600). It sits
 * beside the task stacks, outside the gateway directory that is the only host path a box sees, so
 * nothing in the box can write it. Each line is one append, written before the call that made it
 * returns: a crash loses nothing already logged. Strings are redacted as every log is.
 *
 * Each log has a size cap (`DRYDOCK_AUDIT_LOG_MAX_MIB`, default 64 MiB): the entry that reaches it
 * is followed by one `audit_log_full` marker line, and the agent's later entries are not written,
 * only counted; a person's entries and drydock's lifecycle lines (a person's pace, a handful) are
 * still written, the session's `session_end` with that count. The log stops rather than
 * rotates: its first entries (how the session began, what the agent did first) are what a reader
 * needs most, and a rotation would let an agent push its own early calls out of the log by making
 * many more. The cap is read from the file's size, so every process that writes a session's log
 * (the server, `sessions apply`, `sessions shell`) keeps to the same one.
 */
import { appendFileSync, chmodSync, mkdirSync, statSync } from "node:fs";
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

let warnedMax = false;

/** The default cap of one session's log, in MiB. */
export const DEFAULT_AUDIT_LOG_MAX_MIB = 64;
/** The `tool` of the line that says a log reached its cap. */
export const AUDIT_LOG_FULL = "audit_log_full";

/**
 * The cap of one session's log in bytes: `DRYDOCK_AUDIT_LOG_MAX_MIB` (a positive number of MiB,
 * fractions allowed), else 64 MiB. A value that is not one is warned about once and the default used.
 */
export function auditLogMaxBytes(value = process.env.DRYDOCK_AUDIT_LOG_MAX_MIB): number {
  const mib = value === undefined || value.trim() === "" ? DEFAULT_AUDIT_LOG_MAX_MIB : Number(value);
  if (Number.isFinite(mib) && mib > 0) return Math.max(1, Math.floor(mib * 1024 * 1024));
  if (!warnedMax) {
    warnedMax = true;
    log.warn(
      `DRYDOCK_AUDIT_LOG_MAX_MIB=${JSON.stringify(value)} is not a positive number of MiB; using ${DEFAULT_AUDIT_LOG_MAX_MIB}. Set it to e.g. 256, or unset it`,
    );
  }
  return DEFAULT_AUDIT_LOG_MAX_MIB * 1024 * 1024;
}

/** Entries this process did not write because their log was full, by log path. */
const notLogged = new Map<string, number>();

/** How many entries of a session this process left out of its full log. */
export function auditEntriesNotLogged(sessionId: string, state: string = stateDir()): number {
  const path = auditLogPath(sessionId, state);
  return path === undefined ? 0 : (notLogged.get(path) ?? 0);
}

function fileSize(path: string): number {
  try {
    return statSync(path).size;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return 0;
    throw error;
  }
}

/**
 * Appends one entry to its session's log, redacted, while the log is under its cap (`maxBytes`,
 * default `auditLogMaxBytes()`); see the file's comment for what happens at the cap. Never throws:
 * a log that cannot be written is a warning (once per session), not a failed tool call.
 */
export function appendAuditEntry(
  entry: AuditEntry,
  state: string = stateDir(),
  maxBytes: number = auditLogMaxBytes(),
): void {
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
    const size = fileSize(path);
    let written = entry;
    if (size >= maxBytes) {
      const dropped = notLogged.get(path) ?? 0;
      // Only the agent's entries stop: they are what can flood the log. What a person did (the
      // shell's commands, an apply) and drydock's few lifecycle lines are still written, and the
      // session's end says how many of the agent's entries are missing.
      if (entry.actor === "agent") {
        notLogged.set(path, dropped + 1);
        return;
      }
      if (entry.tool === "session_end") {
        written = { ...entry, args: { ...entry.args, entries_not_logged: dropped } };
      }
    }
    const line = JSON.stringify(redactStrings(written)) + "\n";
    appendFileSync(path, line, { mode: 0o600, flag: "a" });
    if (size < maxBytes && size + Buffer.byteLength(line) >= maxBytes) {
      appendFileSync(path, JSON.stringify(fullMarker(entry.session, maxBytes)) + "\n", { flag: "a" });
    }
  } catch (error) {
    preparedDirs.delete(auditDir(state));
    if (warned.has(path)) return;
    warned.add(path);
    log.warn(`session ${entry.session}: could not write its audit log ${path}: ${(error as Error).message}`);
  }
}

/** The line after which a full log holds no more entries (but the session's end). */
function fullMarker(session: string, maxBytes: number): AuditEntry {
  return {
    ts: new Date().toISOString(),
    session,
    actor: "drydock",
    tool: AUDIT_LOG_FULL,
    args: { max_bytes: maxBytes },
    outcome: {
      ok: false,
      error: `audit log cap of ${formatMiB(maxBytes)} reached (DRYDOCK_AUDIT_LOG_MAX_MIB raises it): the agent's later calls are counted in session_end, not logged; a person's commands still are`,
    },
    duration_ms: null,
    output_bytes: null,
  };
}

function formatMiB(bytes: number): string {
  const mib = bytes / (1024 * 1024);
  if (mib < 0.01) return `${bytes} bytes`;
  return `${Number.isInteger(mib) ? mib : mib.toFixed(2)} MiB`;
}

/** Every string in a value passed through the log redactors. */
export function redactStrings<T>(value: T): T {
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
