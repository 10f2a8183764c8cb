/**
 * Stops a command as a whole: the shell that runs it (so no further part of its command list can
 * start), every process descended from that shell, and every process carrying the command's
 * token in its environment (which finds what left the shell's tree: `setsid`, double-forked
 * daemons). One script, run in the box as the box user; it answers once nothing of the command is
 * left. Processes that are not the command's (other execs in the box, PID 1) are never signalled.
 */
import { boxScript } from "../util/box-script.js";
import { COMMAND_TOKEN_VARIABLE } from "./shell-frame.js";

export interface StopRequest {
  /** The shell running the command (its pid in the box). */
  shellPid: number;
  /** The command's token (the value of DRYDOCK_COMMAND in what it started). */
  token: string;
  /** How long processes that handle SIGINT get to finish before SIGKILL. */
  graceMs: number;
  /**
   * Written to each terminal once the command's processes are gone and before the shell is
   * killed: everything they wrote arrives before it, so the host knows it has all their output.
   */
  flushMarker: string;
  terminals: string[];
}

export interface StopReport {
  /** Processes that got SIGINT (the shell itself is not counted). */
  interrupted: number;
  /** Processes still running after the grace, or started during it, that got SIGKILL. */
  killed: number;
  /** Processes of the command still there at the end (none, unless the kernel holds them). */
  left: number;
}

/**
 * The script (stop-command.sh): `$1` shell pid, `$2` token, `$3` grace in ms, `$4` flush marker,
 * then terminals. Bash builtins only in the scan (no process per /proc entry); zombies count as
 * gone. The shell is stopped first and killed last, after the flush markers.
 */
export const STOP_SCRIPT = boxScript("sandbox/stop-command.sh", { COMMAND_TOKEN_VARIABLE });

/** The script's last line, as numbers; undefined when it did not finish. */
export function parseStopReport(stdout: string): StopReport | undefined {
  const match = /^stopped (\d+) (\d+) (\d+)$/m.exec(stdout);
  if (!match) return undefined;
  return { interrupted: Number(match[1]), killed: Number(match[2]), left: Number(match[3]) };
}

/** The script's arguments for a request. */
export function stopArguments(request: StopRequest): string[] {
  return [
    String(request.shellPid),
    request.token,
    String(request.graceMs),
    request.flushMarker,
    ...request.terminals,
  ];
}
