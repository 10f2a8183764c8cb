/**
 * How many more sessions fit, from the memory the server's boxes use now rather than their
 * limits: an idle box uses a few MiB of its 2 GiB limit, so counting limits let a 24 GiB host run
 * 11 sessions. Each box counts what it uses (at most its limit) plus what it holds on the host
 * outside its cgroup; a session still starting counts as a new one. Sessions together may use the
 * host's memory less a reserve, which keeps room for the host itself and for boxes that grow.
 * Pure, so the arithmetic is tested without an engine.
 */
import type { BoxMemory } from "../engine/box-memory.js";

/** A new session's box until it is measured (an idle box with 1,000 files uses about 12 MiB). */
export const NEW_BOX_MIB = 64;
/** What a session holds on the host outside its box: containerd-shim (3.7 MiB) and drydock's sockets. */
export const HOST_SIDE_MIB = 5;

/** The reserve when none is given: a quarter of the host's memory, at least 1 GiB. */
export function defaultReserveMiB(hostMiB: number): number {
  return Math.max(1024, Math.round(hostMiB / 4));
}

export interface AdmissionInput {
  /** The engine host's memory. */
  hostMiB: number;
  /** Memory sessions leave free (`--memory-reserve-mb`). */
  reserveMiB: number;
  /** The server's boxes as measured: sessions, sessions starting, warm boxes. */
  boxes: readonly BoxMemory[];
  /** Sessions asked for and not yet measured. */
  starting: number;
  /** The memory limit a new session's box gets. */
  newBoxLimitMiB: number;
  /** Sessions clients hold now (for `--max-sessions`). */
  held: number;
  /** `--max-sessions`, when given. */
  maxSessions?: number;
  /** Whose boxes these are, for the sentences; default "this server". */
  owner?: string;
}

export interface AdmissionFigure {
  /** How many more sessions may start now; 0: the next is refused. */
  fit: number;
  /** What the figure is bound by. */
  by: "memory" | "max-sessions" | "cluster";
  /** The host's memory less the reserve. */
  budgetMiB: number;
  /** What the server's boxes and starting sessions count for. */
  usedMiB: number;
  /** What one more session counts for until its box is measured. */
  newSessionMiB: number;
  /** Why the figure is what it is, in one sentence. */
  why: string;
}

const mib = (n: number): string => `${Math.round(n).toLocaleString("en-US")} MiB`;
const plural = (n: number, word: string): string => `${n} ${word}${n === 1 ? "" : "s"}`;

/** The boxes counted, as the subject of a sentence. */
function whose(input: AdmissionInput): string {
  const starting = input.starting ? `, and ${plural(input.starting, "session")} starting` : "";
  return `the boxes of ${input.owner ?? "this server"} (${input.boxes.length}${starting})`;
}

export function admissionFigure(input: AdmissionInput): AdmissionFigure {
  const budgetMiB = Math.max(0, input.hostMiB - input.reserveMiB);
  const newSessionMiB = Math.min(NEW_BOX_MIB, input.newBoxLimitMiB) + HOST_SIDE_MIB;
  const boxesMiB = input.boxes.reduce((sum, b) => sum + Math.min(b.usedMiB, b.limitMiB) + HOST_SIDE_MIB, 0);
  const usedMiB = boxesMiB + input.starting * newSessionMiB;
  const memoryFit = Math.max(0, Math.floor((budgetMiB - usedMiB) / newSessionMiB));
  const countFit =
    input.maxSessions === undefined ? Infinity : Math.max(0, input.maxSessions - input.held - input.starting);
  const by = countFit < memoryFit ? "max-sessions" : "memory";
  const fit = Math.min(memoryFit, countFit);
  const memory =
    `${whose(input)} use ${mib(usedMiB)} of the ${mib(budgetMiB)} sessions may use ` +
    `(${mib(input.hostMiB)} of host memory less a ${mib(input.reserveMiB)} reserve, --memory-reserve-mb; ` +
    `each box counted at what it uses, at most its limit, plus ${mib(HOST_SIDE_MIB)} on the host), ` +
    `and a new session counts ${mib(newSessionMiB)} until its box is measured`;
  const cap =
    input.maxSessions === undefined
      ? ""
      : `; --max-sessions ${input.maxSessions} allows ${countFit} more (${input.held} held, ${input.starting} starting)`;
  return {
    fit,
    by,
    budgetMiB,
    usedMiB,
    newSessionMiB,
    why: `${plural(fit, "more session")} fit${by === "max-sessions" ? ", bound by --max-sessions" : ""}: ${memory}${cap}`,
  };
}

/** Why a new session is refused, naming what is full and the fix; undefined when it fits. */
export function refusal(figure: AdmissionFigure, input: AdmissionInput): string | undefined {
  if (figure.fit > 0) return undefined;
  if (figure.by === "max-sessions") {
    const held = input.held + input.starting;
    return `there are already ${held} sessions, the most this server runs at once (--max-sessions ${input.maxSessions}); remove one you no longer need with session_destroy (a kept session whose client went away too: \`drydock sessions list\` shows it, and its creator continues it with session_resume), or ask whoever runs the server to raise --max-sessions`;
  }
  return (
    `no memory for another session: ${whose(input)} use ${mib(figure.usedMiB)} ` +
    `of the ${mib(figure.budgetMiB)} sessions may use (${mib(input.hostMiB)} of host memory less a ` +
    `${mib(input.reserveMiB)} reserve), and a new session needs ${mib(figure.newSessionMiB)}; remove a ` +
    `session you no longer need with session_destroy, or ask whoever runs the server to lower ` +
    `--memory-reserve-mb or give the engine's host more memory`
  );
}
