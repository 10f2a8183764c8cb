/**
 * Finds and removes boxes left behind by a drydock process that died (SIGKILL, crash, power loss).
 * By default only boxes of this state directory whose owner is gone, on this host, are removed:
 * another state directory's boxes are another drydock's, and a live owner's box is a session
 * someone is using. Each widening is asked for by name (`PruneScope`); the CLI also asks for a
 * confirmation before it removes anything a widening brought in (`PlannedRemoval.wider`).
 * Idle boxes of a warm pool are found the same way (they carry the session label too, and the pool
 * label), and the gateway directory of each removed box of this state directory goes with it, as
 * do gateway directories whose box is gone.
 *
 * A box kept on purpose (`serve --keep-sessions`: the kept-until label) outlives its dead owner
 * until that time, so a later server can adopt it; while a live server that adopted it runs (its
 * session record names it), it is that server's. An idle warm box is never kept: it has no session
 * record. `kept` removes kept boxes whose keeper is gone too.
 */
import { readdir, rm, stat } from "node:fs/promises";
import { hostname } from "node:os";
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
  removeStaleRecordTemps,
  sessionRecordsDir,
} from "./session-record.js";

const log = logger("prune");

/** What a prune may remove beyond this state directory's boxes whose owner is gone. */
export interface PruneScope {
  /** Also boxes kept on purpose (`--keep-sessions`) whose keeper is gone. */
  kept?: boolean;
  /** Also boxes whose owner (or adopter) is alive, or on another host where drydock cannot tell. */
  live?: boolean;
  /** Also boxes of these other state directories. */
  stateDirs?: readonly string[];
  /** Also boxes of every other state directory on the engine. */
  everyStateDir?: boolean;
}

/** Whose a box is, as far as this host can tell. */
export type OwnerState = "gone" | "alive" | "elsewhere";

export interface PlannedRemoval {
  box: BoxSummary;
  /** The session id, or the short box id of a box without one. */
  name: string;
  /** The state directory whose box it is. */
  state: string;
  owner: OwnerState;
  kept: boolean;
  /** Brought in by a widening that needs a confirmation: another state directory's, or a live owner's. */
  wider: boolean;
}

export interface PrunePlan {
  remove: PlannedRemoval[];
  kept: number;
  /** Every drydock box the engine has, for removing leftovers of boxes that are gone. */
  boxes: BoxSummary[];
}

export interface PruneResult {
  removed: string[];
  kept: number;
}

/** A box's state directory: its label, or this one for boxes made before boxes carried it. */
function boxState(box: BoxSummary, here: string): string {
  const label = box.labels[LABEL_STATE];
  // Compared as absolute paths: `DRYDOCK_STATE_DIR=/x/` and `=/x` are one directory.
  return label ? resolve(label) : here;
}

/** Whether a box's owner (or the server that adopted it) is alive, gone, or on another host. */
export async function ownerState(box: BoxSummary, state: string): Promise<OwnerState> {
  const session = box.labels[LABEL_SESSION];
  const adopter = parseOwner(session ? (await readSessionRecord(session, state))?.adopted_by : undefined);
  if (adopter && !ownerIsDead(adopter)) return "alive";
  const owner = parseOwner(box.labels[LABEL_OWNER]);
  if (!owner) return "gone";
  // Another host's processes cannot be checked from here: such a box may be a live session.
  if (owner.host !== hostname()) return "elsewhere";
  return ownerIsDead(owner) ? "gone" : "alive";
}

/** Which boxes a prune of this scope removes, and why each is in it; removes nothing. */
export async function planPrune(engine: BoxEngine, scope: PruneScope = {}): Promise<PrunePlan> {
  const byId = new Map<string, BoxSummary>();
  for (const label of [LABEL_SESSION, LABEL_POOL]) {
    for (const box of await engine.listBoxes(label)) byId.set(box.id, box);
  }
  const boxes = [...byId.values()];
  const here = resolve(stateDir());
  const named = new Set((scope.stateDirs ?? []).map((dir) => resolve(dir)));
  const verdicts = await Promise.all(
    boxes.map(async (box): Promise<PlannedRemoval | undefined> => {
      const state = boxState(box, here);
      const ours = state === here;
      if (!ours && !scope.everyStateDir && !named.has(state)) return undefined;
      const owner = await ownerState(box, state);
      if (owner !== "gone" && !scope.live) return undefined;
      const kept = owner === "gone" && (await stillKept(box, Date.now(), state));
      if (kept && !scope.kept) return undefined;
      const name = box.labels[LABEL_SESSION] ?? box.id.slice(0, 12);
      return { box, name, state, owner, kept, wider: !ours || owner !== "gone" };
    }),
  );
  const remove = verdicts.filter((v): v is PlannedRemoval => v !== undefined);
  return { remove, kept: boxes.length - remove.length, boxes };
}

/** Removes what a plan names, and this state directory's leftovers of boxes that are gone. */
export async function removePlanned(engine: BoxEngine, plan: PrunePlan): Promise<PruneResult> {
  const here = resolve(stateDir());
  const removed: string[] = [];
  await Promise.all(
    plan.remove.map(async ({ box, name, state }) => {
      await engine.remove(box.id);
      const session = box.labels[LABEL_SESSION];
      if (session && /^[0-9a-f]{12}$/.test(session) && state === here) {
        await rm(gatewayDirFor(session), { recursive: true, force: true });
        await removeSessionRecord(session);
      }
      removed.push(name);
    }),
  );
  if (removed.length) log.info(`removed ${removed.length} orphaned box(es): ${removed.join(", ")}`);
  const withBox = new Set(plan.boxes.map((b) => b.labels[LABEL_SESSION] ?? ""));
  await removeDirsWithoutBox(withBox);
  await removeRecordsWithoutBox(withBox);
  const temps = await removeStaleRecordTemps(DIR_GRACE_MS);
  if (temps > 0) log.info(`removed ${temps} unfinished session record write(s)`);
  return { removed, kept: plan.kept };
}

/** Plans and removes at once: what a server does at start and at its interval. */
export async function pruneOrphans(engine: BoxEngine, scope: PruneScope = {}): Promise<PruneResult> {
  return removePlanned(engine, await planPrune(engine, scope));
}

/**
 * Whether a box whose owner died is kept: its kept-until time has not passed (and it serves a
 * session: it has a record), or a live drydock adopted it.
 */
export async function stillKept(box: BoxSummary, now = Date.now(), state = stateDir()): Promise<boolean> {
  const until = keptUntil(box.labels);
  const session = box.labels[LABEL_SESSION];
  if (until === undefined || !session) return false;
  const record = await readSessionRecord(session, state);
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
