/**
 * How a box with network none reaches a service of the session on the host (the LLM gateway, the
 * egress proxy) without any host path in the box: the box agent's relay (box-agent/drydock_box/
 * relay.py) listens on 127.0.0.1:PORT inside the box and carries each connection as frames over
 * an exec stream drydock holds; here each connection the box opens is connected to the one
 * service the relay was started for. A frame names no destination, so whatever the box sends,
 * it reaches that service and nothing else: another session's gateway is not addressable.
 *
 * Frames (relay.py has the same table): kind (1 byte), connection id and payload length (u32,
 * big-endian), payload (at most 64 KiB). Box to host: R ready, O opened, D data, E end of input,
 * C closed. Host to box: D, E, C.
 *
 * Bounds, against a box that floods the relay, opens thousands of connections or speaks garbage:
 * - at most `maxConnections` open at once; an O past it is answered with C;
 * - a frame that is not one of the box's kinds, longer than 64 KiB, an R that is not the first
 *   frame, an O before R or for an id already used: the relay is stopped, every connection closed,
 *   and it is logged; the next use starts a new one;
 * - memory: data for a service that does not read holds the box's stream (the engine's exec is
 *   paused, so the box waits), and data from services is held back while the box's input is full.
 */
import { createConnection } from "node:net";
import { PassThrough, Writable, type Duplex } from "node:stream";
import { logger } from "../util/log.js";
import { boxAgentStart } from "./box-agent.js";
import type { Box } from "./box.js";

const log = logger("box");

const HEADER_BYTES = 9;
export const MAX_PAYLOAD = 64 * 1024;
export const DEFAULT_MAX_CONNECTIONS = 256;
/** The relay must be listening by then. */
const START_TIMEOUT_MS = 15_000;

export const FRAME = {
  ready: 0x52, // R
  opened: 0x4f, // O
  data: 0x44, // D
  end: 0x45, // E
  closed: 0x43, // C
} as const;

/** One frame's bytes. */
export function relayFrame(kind: number, id: number, payload: Buffer = Buffer.alloc(0)): Buffer {
  const header = Buffer.alloc(HEADER_BYTES);
  header[0] = kind;
  header.writeUInt32BE(id, 1);
  header.writeUInt32BE(payload.length, 5);
  return payload.length === 0 ? header : Buffer.concat([header, payload]);
}

export interface RelayHostOptions {
  /** The box relay's standard input. */
  toBox: Writable;
  /** Opens a connection to the service (the only place a connection goes). */
  connect: () => Duplex;
  /** What the relay is for, in logs: "LLM relay". */
  what: string;
  maxConnections?: number;
  /** The box broke the framing: the caller stops the relay's exec. */
  onViolation: (why: string) => void;
}

/** The host's end of one relay: parses what the box writes (`sink`) and connects its connections. */
export class RelayHost {
  /** Where the box relay's standard output goes. */
  readonly sink: Writable;
  readonly ready: Promise<void>;
  private resolveReady: () => void = () => undefined;
  private isReady = false;
  private broken = false;
  private pending: Buffer = Buffer.alloc(0);
  private lastOpened = 0;
  private readonly conns = new Map<number, Duplex>();
  private readonly pausedForBox = new Set<Duplex>();
  private readonly maxConnections: number;

  constructor(private readonly options: RelayHostOptions) {
    this.maxConnections = options.maxConnections ?? DEFAULT_MAX_CONNECTIONS;
    this.ready = new Promise((resolve) => (this.resolveReady = resolve));
    // A write to the box after its input ended must not become an uncaught error.
    options.toBox.on("error", () => undefined);
    options.toBox.on("drain", () => {
      for (const socket of this.pausedForBox) socket.resume();
      this.pausedForBox.clear();
    });
    this.sink = new Writable({
      write: (chunk: Buffer, _encoding, callback) => {
        if (this.broken) return callback();
        this.pending = this.pending.length === 0 ? chunk : Buffer.concat([this.pending, chunk]);
        this.readFrames(callback);
      },
    });
  }

  /** Connections open now. */
  get open(): number {
    return this.conns.size;
  }

  /** Closes every connection (the relay ended). */
  closeAll(): void {
    for (const socket of this.conns.values()) socket.destroy();
    this.conns.clear();
    this.pausedForBox.clear();
  }

  /** Handles every whole frame buffered; waits where a service is not reading. */
  private readFrames(callback: () => void): void {
    while (!this.broken && this.pending.length >= HEADER_BYTES) {
      const kind = this.pending[0] ?? 0;
      const id = this.pending.readUInt32BE(1);
      const length = this.pending.readUInt32BE(5);
      if (length > MAX_PAYLOAD) {
        this.violation(`a frame of ${length} bytes (at most ${MAX_PAYLOAD})`);
        break;
      }
      if (this.pending.length < HEADER_BYTES + length) break;
      const payload = this.pending.subarray(HEADER_BYTES, HEADER_BYTES + length);
      this.pending = this.pending.subarray(HEADER_BYTES + length);
      const wait = this.handle(kind, id, payload);
      if (wait) {
        void wait.then(() => this.readFrames(callback));
        return;
      }
    }
    callback();
  }

  /** One frame from the box; a promise when the service must take in what it holds first. */
  private handle(kind: number, id: number, payload: Buffer): Promise<void> | undefined {
    if (kind === FRAME.ready) {
      if (this.isReady || id !== 0 || payload.length !== 0) return this.violation("a second ready frame");
      this.isReady = true;
      this.resolveReady();
      return undefined;
    }
    if (!this.isReady) return this.violation("a frame before the relay said it was ready");
    switch (kind) {
      case FRAME.opened:
        if (id <= this.lastOpened || payload.length !== 0) {
          return this.violation(`an open of connection ${id}, not above the last one (${this.lastOpened})`);
        }
        this.lastOpened = id;
        if (this.conns.size >= this.maxConnections) {
          this.toBox(relayFrame(FRAME.closed, id));
          return undefined;
        }
        this.connect(id);
        return undefined;
      case FRAME.data: {
        const socket = this.conns.get(id);
        if (!socket || payload.length === 0) return undefined;
        if (socket.write(payload)) return undefined;
        return new Promise((resolve) => {
          const go = () => {
            socket.off("drain", go);
            socket.off("close", go);
            resolve();
          };
          socket.on("drain", go);
          socket.on("close", go);
        });
      }
      case FRAME.end:
        this.conns.get(id)?.end();
        return undefined;
      case FRAME.closed: {
        const socket = this.conns.get(id);
        this.conns.delete(id);
        // What the box sent before still reaches the service, then the connection closes.
        socket?.end(() => socket.destroy());
        return undefined;
      }
      default:
        return this.violation(`a frame of kind 0x${kind.toString(16).padStart(2, "0")}`);
    }
  }

  private connect(id: number): void {
    const socket = this.options.connect();
    this.conns.set(id, socket);
    socket.on("data", (chunk: Buffer) => {
      // (After the box closed it, what the service still says has nowhere to go.)
      if (this.conns.get(id) !== socket) return;
      for (let at = 0; at < chunk.length; at += MAX_PAYLOAD) {
        if (!this.toBox(relayFrame(FRAME.data, id, chunk.subarray(at, at + MAX_PAYLOAD)))) {
          socket.pause();
          this.pausedForBox.add(socket);
        }
      }
    });
    socket.on("end", () => {
      if (this.conns.get(id) === socket) this.toBox(relayFrame(FRAME.end, id));
    });
    socket.on("close", () => {
      this.pausedForBox.delete(socket);
      if (this.conns.get(id) !== socket) return;
      this.conns.delete(id);
      this.toBox(relayFrame(FRAME.closed, id));
    });
    // A refused or broken connection closes; the box is told by the close.
    socket.on("error", (error) => log.debug(`${this.options.what}: connection ${id}: ${error.message}`));
  }

  private toBox(bytes: Buffer): boolean {
    if (this.broken || this.options.toBox.writableEnded) return true;
    return this.options.toBox.write(bytes);
  }

  private violation(why: string): undefined {
    if (this.broken) return undefined;
    this.broken = true;
    this.pending = Buffer.alloc(0);
    this.closeAll();
    log.warn(
      `${this.options.what}: the box sent ${why}; the relay is stopped and every connection through it closed`,
    );
    this.options.onViolation(why);
    return undefined;
  }
}

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
