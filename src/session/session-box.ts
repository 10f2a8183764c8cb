/**
 * The pieces a session runs on, made the same way whether a session starts cold or a warm pool
 * makes them ahead of time: a box with its gateway directory, and the persistent shell in it.
 */
import { mkdir, rm } from "node:fs/promises";
import { join } from "node:path";
import type { Engine } from "../engine/engine.js";
import { Box } from "../sandbox/box.js";
import type { BoxOptions } from "../sandbox/box-profile.js";
import { BOX_USER, WORKSPACE } from "../sandbox/box-profile.js";
import { PtyShell } from "../sandbox/pty-shell.js";
import { findDockerCli } from "../util/docker-cli.js";
import { stateDir } from "../util/paths.js";

/** The host directory bind-mounted read-only at /run/drydock in a session's box (the gateway socket's). */
export function gatewayDirFor(sessionId: string): string {
  return join(stateDir(), "run", sessionId);
}

/** Creates the gateway directory and a started box for a session; leaves nothing behind on failure. */
export async function createSessionBox(
  engine: Engine,
  sessionId: string,
  options: BoxOptions,
): Promise<{ box: Box; gatewayDir: string }> {
  const gatewayDir = gatewayDirFor(sessionId);
  await mkdir(gatewayDir, { recursive: true, mode: 0o700 });
  try {
    return { box: await Box.create(engine, sessionId, { ...options, gatewayDir }), gatewayDir };
  } catch (error) {
    await rm(gatewayDir, { recursive: true, force: true });
    throw error;
  }
}

/** Starts the persistent shell of a session's box, as the box user in /workspace. */
export function startSessionShell(box: Box, env: Record<string, string> = {}): Promise<PtyShell> {
  return PtyShell.start({
    dockerPath: findDockerCli(),
    containerId: box.id,
    user: BOX_USER,
    workdir: WORKSPACE,
    env: { PAGER: "cat", GIT_PAGER: "cat", ...env },
    signalCommandProcesses: (pid, signal) => signalSession(box, pid, signal),
  });
}

/** Signals every process in the shell's session except the shell itself. */
async function signalSession(box: Box, shellPid: number, signal: "INT" | "KILL"): Promise<void> {
  await box.sh(
    'for p in $(pgrep -s "$1"); do [ "$p" = "$1" ] || kill -s "$2" "$p" 2>/dev/null; done; true',
    [String(shellPid), signal],
    { timeoutMs: 10_000 },
  );
}
