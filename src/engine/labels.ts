/**
 * Labels on every box: which session, which drydock process owns it, when it was made. They let
 * a later process or `drydock sessions prune` find boxes whose owner died.
 */
import { readFileSync } from "node:fs";
import { hostname } from "node:os";

export const LABEL_SESSION = "drydock.session";
export const LABEL_OWNER = "drydock.owner";
export const LABEL_CREATED = "drydock.created";
export const LABEL_REPO = "drydock.repo";
export const LABEL_POOL = "drydock.pool";
/**
 * The state directory of the drydock that made the box (where its gateway directory lives): a
 * drydock prunes only orphans of its own state directory, whose leftovers it can also remove.
 */
export const LABEL_STATE = "drydock.state";
/**
 * On a box kept on purpose (`serve --keep-sessions`): the time (epoch seconds) until which the
 * reaper leaves it running after its owner died, so that a later server can adopt it.
 */
export const LABEL_KEPT_UNTIL = "drydock.kept-until";

/** The label value for a box kept `ttlMs` from now. */
export function keptUntilLabel(ttlMs: number, now = Date.now()): string {
  return String(Math.floor((now + ttlMs) / 1000));
}

/** When a box's keeping ends (epoch ms), or undefined for a box not kept. */
export function keptUntil(labels: Record<string, string>): number | undefined {
  const value = labels[LABEL_KEPT_UNTIL];
  if (value === undefined || !/^\d{1,12}$/.test(value)) return undefined;
  return Number(value) * 1000;
}

/** An owner is a process on a host, told apart from a later process with the same pid by its start time. */
export interface Owner {
  host: string;
  pid: number;
  startTicks: string;
}

export function formatOwner(owner: Owner): string {
  return `${owner.host}/${owner.pid}/${owner.startTicks}`;
}

export function parseOwner(value: string | undefined): Owner | undefined {
  if (!value) return undefined;
  const parts = value.split("/");
  if (parts.length !== 3) return undefined;
  const pid = Number(parts[1]);
  if (!Number.isInteger(pid) || pid <= 0) return undefined;
  return { host: parts[0]!, pid, startTicks: parts[2]! };
}

/** What /proc says of a process: its state letter and start time, or undefined where /proc has no entry. */
function procStat(pid: number): { state: string; startTicks: string } | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    // Fields after the command name (which may hold spaces) start after the last ')'.
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return { state: fields[0] ?? "", startTicks: fields[19] ?? "" };
  } catch {
    return undefined;
  }
}

/** The process start time from /proc (clock ticks since boot), or "" where /proc is missing. */
export function processStartTicks(pid: number): string {
  return procStat(pid)?.startTicks ?? "";
}

export function currentOwner(): Owner {
  return { host: hostname(), pid: process.pid, startTicks: processStartTicks(process.pid) };
}

/**
 * Whether the owner is known to be gone. Owners on other hosts are never judged dead: their
 * boxes are left for `sessions prune --live`. A killed process whose parent has not collected it
 * yet (a zombie: its parent never waits, or it was handed to an init that reaps late) still
 * answers signal 0 with its own start time, so its state in /proc decides.
 */
export function ownerIsDead(owner: Owner, here: string = hostname()): boolean {
  if (owner.host !== here) return false;
  try {
    process.kill(owner.pid, 0);
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "ESRCH";
  }
  const stat = procStat(owner.pid);
  if (!stat) return false;
  if (/^[ZXx]$/.test(stat.state)) return true;
  return stat.startTicks !== "" && owner.startTicks !== "" && stat.startTicks !== owner.startTicks;
}
