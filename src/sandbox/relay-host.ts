/**
 * The host's end of one stream relay (stream-relay.ts starts them): it reads the frames the box's
 * relay writes (box-agent/drydock_box/relay.py) and connects each connection the box opens to the
 * one service it was made for. A frame names no destination, so whatever the box sends reaches
 * that service and nothing else.
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
import { Writable, type Duplex } from "node:stream";
import { logger } from "../util/log.js";

const log = logger("box");

const HEADER_BYTES = 9;
export const MAX_PAYLOAD = 64 * 1024;
export const DEFAULT_MAX_CONNECTIONS = 256;
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
