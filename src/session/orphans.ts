/**
 * Finds and removes boxes left behind: by a drydock process that died (SIGKILL, crash, power
 * loss), or any box at all with `all`. Owners on other hosts are left alone unless `all`. Idle
 * boxes of a warm pool are found the same way (they carry the session label too, and the pool
 * label), and the gateway directory of each removed box goes with it, as do gateway directories
 * whose box is gone.
 *
 * A box kept on purpose (`serve --keep-sessions`: the kept-until label) outlives its dead owner
 * until that time, so a later server can adopt it; while a live server that adopted it runs (its
 * session record names it), it is that server's. An idle warm box is never kept: it has no session
 * record. `all` removes kept boxes too.
 */
import { readdir, rm, stat } from "node:fs/promises";
import { join, resolve } from "node:path";
import type { BoxEngine, BoxSummary } from "../engine/box-engine.js";
import {
  LABEL_OWNER,
  keptUntil,
  LABEL_POOL,
  LABEL_SESSION,
  LABEL_STATE,
  ownerIsDead,
  parseOwner,
} from "../engine/labels.js";
import { logger } from "../util/log.js";
import { stateDir } from "../util/paths.js";
import { gatewayDirFor } from "./session-box.js";
import {
  readSessionRecord,
  recordedSessions,
  removeSessionRecord,
  sessionRecordsDir,
} from "./session-record.js";

const log = logger("prune");

export interface PruneResult {
  removed: string[];
  kept: number;
}

export async function pruneOrphans(engine: BoxEngine, options: { all?: boolean } = {}): Promise<PruneResult> {
  const byId = new Map<string, BoxSummary>();
  for (const label of [LABEL_SESSION, LABEL_POOL]) {
    for (const box of await engine.listBoxes(label)) byId.set(box.id, box);
  }
  const boxes = [...byId.values()];
  const removed: string[] = [];
  let kept = 0;
  await Promise.all(
    boxes.map(async (box) => {
      const owner = parseOwner(box.labels[LABEL_OWNER]);
      // Another drydock's boxes (another state directory) are its own to prune, unless --all.
      // Compared as absolute paths: `DRYDOCK_STATE_DIR=/x/` and `=/x` are one directory.
      const label = box.labels[LABEL_STATE];
      const ours = !label || resolve(label) === resolve(stateDir());
      const orphan = options.all || (ours && (!owner || ownerIsDead(owner)) && !(await stillKept(box)));
      if (!orphan) {
        kept++;
        return;
      }
      await engine.remove(box.id);
      const session = box.labels[LABEL_SESSION];
      if (session && /^[0-9a-f]{12}$/.test(session) && ours) {
        await rm(gatewayDirFor(session), { recursive: true, force: true });
        await removeSessionRecord(session);
      }
      removed.push(session ?? box.id.slice(0, 12));
    }),
  );
  if (removed.length) log.info(`removed ${removed.length} orphaned box(es): ${removed.join(", ")}`);
  const withBox = new Set(boxes.map((b) => b.labels[LABEL_SESSION] ?? ""));
  await removeDirsWithoutBox(withBox);
  await removeRecordsWithoutBox(withBox);
  return { removed, kept };
}

/**
 * Whether a box whose owner died is kept: its kept-until time has not passed (and it serves a
 * session: it has a record), or a live drydock adopted it.
 */
export async function stillKept(box: BoxSummary, now = Date.now()): Promise<boolean> {
  const until = keptUntil(box.labels);
  const session = box.labels[LABEL_SESSION];
  if (until === undefined || !session) return false;
  const record = await readSessionRecord(session);
  if (!record) return false;
  const adopter = parseOwner(record.adopted_by);
  if (adopter && !ownerIsDead(adopter)) return true;
  return until > now;
}

/**
 * Records of sessions whose box is gone (a process killed before it could remove them). A record
 * is written just after its box is made: one younger than the grace may belong to a box made
 * after the list was taken.
 */
async function removeRecordsWithoutBox(sessionsWithBox: Set<string>): Promise<void> {
  for (const id of await recordedSessions()) {
    if (sessionsWithBox.has(id)) continue;
    const info = await stat(join(sessionRecordsDir(), `${id}.json`)).catch(() => undefined);
    if (info && Date.now() - info.mtimeMs >= DIR_GRACE_MS) await removeSessionRecord(id);
  }
}

/** A gateway directory is made just before its box: one this old with no box will never get one. */
const DIR_GRACE_MS = 60_000;

/**
 * Removes gateway directories whose box no longer exists at all: left by a process killed between
 * making the directory and its box, or by a box removed outside drydock while its server was down.
 */
async function removeDirsWithoutBox(sessionsWithBox: Set<string>): Promise<void> {
  const run = join(stateDir(), "run");
  const names = await readdir(run).catch(() => [] as string[]);
  for (const name of names) {
    if (!/^[0-9a-f]{12}$/.test(name) || sessionsWithBox.has(name)) continue;
    const info = await stat(join(run, name)).catch(() => undefined);
    if (!info?.isDirectory() || Date.now() - info.mtimeMs < DIR_GRACE_MS) continue;
    await rm(join(run, name), { recursive: true, force: true });
    log.info(`removed the gateway directory of session ${name}, whose box is gone`);
  }
}
