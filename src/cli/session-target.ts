/**
 * Which session a `drydock sessions` verb means: a 12-hex session id or a unique prefix of one,
 * among this state directory's boxes, session records and audit logs. The box (when it still
 * exists) and the record come with it, so the verbs work from another terminal while `serve`
 * runs, and after it stopped where the box was kept.
 */
import { resolve } from "node:path";
import type { BoxEngine, BoxSummary } from "../engine/box-engine.js";
import { LABEL_SESSION, LABEL_STATE } from "../engine/labels.js";
import { auditedSessions, auditLogPath } from "../session/audit-log.js";
import { readSessionRecord, recordedSessions, type SessionRecord } from "../session/session-record.js";
import { NotFoundError } from "../util/errors.js";
import { stateDir } from "../util/paths.js";

export interface SessionTarget {
  id: string;
  /** The session's box, when it still exists. */
  box: BoxSummary | undefined;
  record: SessionRecord | undefined;
  /** Where its audit log is (or would be). */
  logPath: string;
  state: string;
}

/**
 * The one id in `known` that `query` names (exactly, or as a unique prefix). Throws a NotFoundError
 * that says how to find ids, or lists the sessions an ambiguous prefix matches.
 */
export function matchSessionId(query: string, known: Iterable<string>): string {
  const ids = [...new Set(known)].sort();
  const wanted = query.trim().toLowerCase();
  if (!/^[0-9a-f]{1,12}$/.test(wanted)) {
    throw new NotFoundError(
      `${JSON.stringify(query)} is not a session id (12 hex digits, or the first few of them); list sessions with \`drydock sessions list\``,
    );
  }
  if (ids.includes(wanted)) return wanted;
  const matches = ids.filter((id) => id.startsWith(wanted));
  if (matches.length === 1) return matches[0]!;
  if (matches.length > 1) {
    throw new NotFoundError(
      `${query} matches ${matches.length} sessions (${matches.join(", ")}); give more of the id`,
    );
  }
  throw new NotFoundError(
    `no session ${query} in ${stateDir()}; list sessions with \`drydock sessions list\` (boxes that still exist) or \`drydock tasks list\`, and check DRYDOCK_STATE_DIR if the server runs with another state directory`,
  );
}

/** The session a verb names, with its box and record. */
export async function findSession(engine: BoxEngine | undefined, query: string): Promise<SessionTarget> {
  const state = stateDir();
  const boxes = engine ? await sessionBoxes(engine, state) : [];
  const known = [
    ...boxes.map((b) => b.labels[LABEL_SESSION] ?? ""),
    ...(await recordedSessions()),
    ...(await auditedSessions(state)),
  ];
  const id = matchSessionId(query, known);
  return {
    id,
    box: boxes.find((b) => b.labels[LABEL_SESSION] === id),
    record: await readSessionRecord(id, state),
    logPath: auditLogPath(id, state)!,
    state,
  };
}

/**
 * A state directory's session boxes, compared as absolute paths. Boxes made before boxes carried
 * their state directory count as `unlabelledAs`'s (default: `state`'s).
 */
export async function sessionBoxes(
  engine: BoxEngine,
  state: string,
  unlabelledAs: string = state,
): Promise<BoxSummary[]> {
  return (await engine.listBoxes(LABEL_SESSION)).filter(
    (b) =>
      resolve(b.labels[LABEL_STATE] ?? unlabelledAs) === resolve(state) &&
      /^[0-9a-f]{12}$/.test(b.labels[LABEL_SESSION] ?? ""),
  );
}

/** The target's box, or an error that says why there is none and what still works. */
export function requireBox(target: SessionTarget, verb: string): BoxSummary {
  if (target.box) {
    if (target.box.state !== "running") {
      throw new NotFoundError(
        `the box of session ${target.id} is ${target.box.state}, not running; \`drydock sessions ${verb}\` needs it running (start it with \`docker start ${target.box.id.slice(0, 12)}\`)`,
      );
    }
    return target.box;
  }
  throw new NotFoundError(
    `session ${target.id} has no box on this engine any more (its server removed it; \`drydock serve --keep-sessions\` keeps boxes; a session on a cluster is found with --engine kubernetes:NAMESPACE); its log is still there: \`drydock sessions log ${target.id}\``,
  );
}

/**
 * The box `query` names among `boxes`: its session's id or a unique prefix of it, else its box id
 * or a unique prefix of at least 4 hex digits. Never more than one box; an empty, ambiguous or
 * unknown query is refused with the ids to choose from.
 */
export function matchBox(query: string, boxes: BoxSummary[]): BoxSummary {
  const wanted = query.trim().toLowerCase();
  const bySession = (id: string) => boxes.find((b) => b.labels[LABEL_SESSION] === id);
  try {
    const id = matchSessionId(
      wanted,
      boxes.map((b) => b.labels[LABEL_SESSION] ?? ""),
    );
    return bySession(id)!;
  } catch (error) {
    if (!/^[0-9a-f]{4,64}$/.test(wanted)) throw error;
    const byBox = boxes.filter((b) => b.id.startsWith(wanted));
    if (byBox.length === 1) return byBox[0]!;
    if (byBox.length > 1) {
      throw new NotFoundError(
        `${query} matches ${byBox.length} boxes (${byBox.map((b) => b.id.slice(0, 12)).join(", ")}); give more of the id`,
      );
    }
    throw error;
  }
}
