/**
 * The pieces a session runs on, made the same way whether a session starts cold or a warm pool
 * makes them ahead of time: a box with its gateway directory, and the persistent shell in it.
 */
import { mkdir, rm } from "node:fs/promises";
import { join } from "node:path";
import type { BoxEngine } from "../engine/box-engine.js";
import { Box } from "../sandbox/box.js";
import type { BoxOptions } from "../sandbox/box-profile.js";
import { BOX_USER, WORKSPACE } from "../sandbox/box-profile.js";
import {
  STOP_SCRIPT,
  parseStopReport,
  stopArguments,
  type StopReport,
  type StopRequest,
} from "../sandbox/command-stop.js";
import { PtyShell } from "../sandbox/pty-shell.js";
import { STDERR_HOLDER, StderrTerminal } from "../sandbox/stderr-terminal.js";
import { stateDir } from "../util/paths.js";

/**
 * The session's private directory on the host for the sockets of its gateway and egress proxy. No
 * box sees it: drydock's relay connects to them for the box (src/sandbox/stream-relay.ts).
 */
export function gatewayDirFor(sessionId: string): string {
  return join(stateDir(), "run", sessionId);
}

/** Creates the gateway directory and a started box for a session; leaves nothing behind on failure. */
export async function createSessionBox(
  engine: BoxEngine,
  sessionId: string,
  options: BoxOptions,
): Promise<{ box: Box; gatewayDir: string }> {
  const gatewayDir = gatewayDirFor(sessionId);
  await mkdir(gatewayDir, { recursive: true, mode: 0o700 });
  try {
    return { box: await Box.create(engine, sessionId, options), gatewayDir };
  } catch (error) {
    await rm(gatewayDir, { recursive: true, force: true });
    throw error;
  }
}

/** Where the shell saves its state before each command (the box user's home is a tmpfs). */
export const SHELL_STATE_FILE = "/home/agent/.drydock/shell-state";

/** Starts the persistent shell of a session's box, as the box user in /workspace. */
export function startSessionShell(
  box: Box,
  env: Record<string, string> = {},
  options: { interruptGraceMs?: number } = {},
): Promise<PtyShell> {
  return PtyShell.start({
    interruptGraceMs: options.interruptGraceMs,
    engine: box.engine,
    containerId: box.id,
    user: BOX_USER,
    workdir: WORKSPACE,
    env: { PAGER: "cat", GIT_PAGER: "cat", ...env },
    stateFile: SHELL_STATE_FILE,
    openStderrTerminal: () =>
      StderrTerminal.open(() =>
        box.engine.openTerminal(box.id, STDERR_HOLDER, { user: BOX_USER, workdir: WORKSPACE }),
      ),
    stopCommand: (request) => stopCommand(box, request),
  });
}

/**
 * Runs the stop script in the box. A box at its process limit may refuse the exec for a moment
 * (the command may be a fork bomb): it is tried again for up to 10 s.
 */
async function stopCommand(box: Box, request: StopRequest): Promise<StopReport> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    try {
      const r = await box.exec(["bash", "-c", STOP_SCRIPT, "drydock-stop", ...stopArguments(request)], {
        timeoutMs: 30_000 + request.graceMs,
      });
      const report = parseStopReport(r.stdout.toString("utf8"));
      if (report) return report;
      throw new Error(
        `the stop script ended (${r.exitCode}) without a report: ${r.stderr.toString("utf8").slice(-300)}`,
      );
    } catch (error) {
      if (Date.now() > deadline || !(await box.isRunning().catch(() => false))) throw error;
      await new Promise((r) => setTimeout(r, 250));
    }
  }
}
