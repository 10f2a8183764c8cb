/**
 * How a box with network none reaches a service of the session on the host (the LLM gateway, the
 * egress proxy) without any host path in the box: the box agent's relay (box-agent/drydock_box/
 * relay.py) listens on 127.0.0.1:PORT inside the box and carries each connection as frames over
 * an exec stream drydock holds; relay-host.ts connects each connection the box opens to the one
 * service the relay was started for. This module starts relays, once per box and port, and keeps
 * the ones asked to keep running.
 */
import { createConnection } from "node:net";
import { PassThrough } from "node:stream";
import { logger } from "../util/log.js";
import { boxAgentStart } from "./box-agent.js";
import type { Box } from "./box.js";
import { RelayHost } from "./relay-host.js";

const log = logger("box");

/** The relay must be listening by then. */
const START_TIMEOUT_MS = 15_000;

/** What the relay is called in a process listing in the box; its source arrives on its input. */
export const RELAY_NAME = "drydock-box-relay";
const START = `exec -a ${RELAY_NAME} python3 -I -S -c "$1" relay "$2"`;

interface RunningRelay {
  socketPath: string;
  ready: Promise<void>;
  ended: boolean;
  /** Resolves with why it ended. */
  exited: Promise<string>;
}

/** A relay kept running is started again this long after it ends, doubling up to RESTART_MAX_MS. */
const RESTART_FIRST_MS = 250;
const RESTART_MAX_MS = 10_000;
/** A relay that ran this long before it ended starts the back-off anew. */
const RESTART_RESET_MS = 60_000;

const running = new WeakMap<Box, Map<number, RunningRelay>>();

/**
 * Starts the relay of `port` in the box to the unix socket `socketPath` on the host, unless it
 * runs; cheap when it does. It lives as long as the box (its exec ends with it) or until the box
 * stops it (an agent's `pkill python3` does); the next call then starts another. With
 * `keepRunning`, drydock starts it again itself, with a growing pause, for as long as the box runs:
 * for a relay nothing else would start again (the egress proxy's, set up once per session).
 */
export async function ensureStreamRelay(
  box: Box,
  port: number,
  socketPath: string,
  what: string,
  signal?: AbortSignal,
  keepRunning = false,
): Promise<void> {
  let relays = running.get(box);
  if (!relays) running.set(box, (relays = new Map()));
  let relay = relays.get(port);
  if (relay && relay.socketPath !== socketPath) {
    throw new Error(`the ${what}'s port ${port} in the box already leads to ${relay.socketPath}`);
  }
  if (!relay || relay.ended) {
    relay = startStreamRelay(box, port, socketPath, what);
    relays.set(port, relay);
    if (keepRunning) keepRelayRunning(box, port, relay, what);
  }
  if (!signal) return relay.ready;
  const cancelled = new Promise<never>((_, reject) => {
    if (signal.aborted) reject(new Error("cancelled"));
    signal.addEventListener("abort", () => reject(new Error("cancelled")), { once: true });
  });
  return Promise.race([relay.ready, cancelled]);
}

function startStreamRelay(box: Box, port: number, socketPath: string, what: string): RunningRelay {
  const agent = boxAgentStart();
  const input = new PassThrough();
  const stop = new AbortController();
  const host = new RelayHost({
    toBox: input,
    connect: () => createConnection({ path: socketPath, allowHalfOpen: true }),
    what,
    onViolation: () => stop.abort(),
  });
  const stderr: string[] = [];
  const relay: RunningRelay = { socketPath, ready: host.ready, ended: false, exited: Promise.resolve("") };
  const exited = box
    .exec(["bash", "-c", START, "drydock", agent.loader, String(port)], {
      stdin: input,
      stdout: host.sink,
      // The stream lives as long as the box.
      timeoutMs: 2_147_483_647,
      maxOutputBytes: 16 * 1024,
      signal: stop.signal,
      onStderr: (chunk) => stderr.push(chunk.toString("utf8")),
    })
    .then(
      (result) => `it ended with exit code ${result.exitCode}${stderrNote(stderr)}`,
      (error: unknown) => (error instanceof Error ? error.message : String(error)),
    )
    .then((why) => {
      relay.ended = true;
      host.closeAll();
      input.end();
      log.debug(`box ${box.shortId} ${what}: ${why}`);
      return why;
    });
  relay.exited = exited;
  input.write(agent.input);
  let timer: NodeJS.Timeout | undefined;
  relay.ready = Promise.race([
    host.ready,
    exited.then((why) => Promise.reject(new Error(`the ${what} in the box did not start: ${why}`))),
    new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        stop.abort();
        reject(new Error(`the ${what} in the box did not start within ${START_TIMEOUT_MS / 1000} s`));
      }, START_TIMEOUT_MS);
      timer.unref();
    }),
  ]).finally(() => clearTimeout(timer));
  // A failed start is reported to the caller that awaits it; none may be left unhandled.
  relay.ready.catch(() => undefined);
  return relay;
}

/** Starts the relay again each time it ends after it was ready, while the box runs. */
function keepRelayRunning(box: Box, port: number, first: RunningRelay, what: string): void {
  void (async () => {
    let relay = first;
    let pauseMs = RESTART_FIRST_MS;
    for (;;) {
      const startedAt = Date.now();
      const ready = await relay.ready.then(
        () => true,
        () => false,
      );
      const why = await relay.exited;
      // A relay that never started is not retried here: its caller was told why.
      if (!ready || !(await box.isRunning().catch(() => false))) return;
      if (Date.now() - startedAt > RESTART_RESET_MS) pauseMs = RESTART_FIRST_MS;
      log.warn(`box ${box.shortId} ${what} ended (${why}); starting it again in ${pauseMs} ms`);
      await new Promise((resolve) => setTimeout(resolve, pauseMs).unref());
      pauseMs = Math.min(RESTART_MAX_MS, pauseMs * 2);
      const relays = running.get(box);
      const now = relays?.get(port);
      // Someone started it meanwhile (an ensure call), or the box is gone.
      if (!relays || (now !== relay && now !== undefined && !now.ended)) return;
      if (!(await box.isRunning().catch(() => false))) return;
      relay = startStreamRelay(box, port, relay.socketPath, what);
      relays.set(port, relay);
    }
  })();
}

function stderrNote(stderr: string[]): string {
  const text = stderr.join("").trim();
  if (/python3: (command )?not found|No such file/.test(text)) {
    return ": the image has no python3, which drydock's relay in the box needs";
  }
  return text ? `: ${text.slice(0, 500)}` : "";
}
