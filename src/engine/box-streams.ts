/**
 * The exec streams open to each box (a shell's terminals, the box channel, an exec in flight),
 * ended when the box goes. Under runc the engine closes them when a box is removed; under runsc
 * a stream attached to a removed box can stay open for good (seen with the shell's terminals),
 * which would keep a caller waiting and the process alive. So the engine ends them itself when it
 * removes a box, and, while any stream is open, watches the engine's events for boxes that die
 * or go, so a box removed or killed from outside (another process, the engine itself) ends its
 * streams too.
 */
import { PassThrough, type Duplex, type Readable } from "node:stream";
import { logger } from "../util/log.js";
import { short } from "./box-engine.js";

const log = logger("engine");
/** With no stream open, the events watch ends after this long (short execs come in bursts). */
const IDLE_MS = 10_000;

export class BoxStreams {
  private readonly open = new Map<string, Set<Duplex>>();
  private events: Readable | undefined;
  private idle: NodeJS.Timeout | undefined;

  /** `watch` opens the engine's stream of `die` and `destroy` events of containers, as JSON lines. */
  constructor(private readonly watch: () => Promise<Readable>) {}

  /** Holds a stream open to box `id` until it closes, so that the box's going ends it. */
  track(id: string, stream: Duplex): void {
    let streams = this.open.get(id);
    if (streams === undefined) this.open.set(id, (streams = new Set()));
    streams.add(stream);
    this.watchEvents();
    stream.once("close", () => {
      streams.delete(stream);
      if (streams.size === 0 && this.open.get(id) === streams) this.open.delete(id);
      if (this.open.size === 0) this.goIdle();
    });
  }

  /** Ends the streams still open to a box that is gone. */
  end(id: string): void {
    const streams = this.open.get(id);
    if (streams === undefined) return;
    this.open.delete(id);
    if (streams.size > 0)
      log.debug(`${short(id)}: ending ${streams.size} exec stream(s) the gone box left open`);
    for (const stream of streams) stream.destroy();
    if (this.open.size === 0) this.goIdle();
  }

  private watchEvents(): void {
    clearTimeout(this.idle);
    if (this.events !== undefined) return;
    // A placeholder until the request answers, so one watch starts however many streams open.
    const pending = new PassThrough();
    this.events = pending;
    this.watch().then(
      (stream) => {
        if (this.events !== pending) return void stream.destroy();
        this.events = stream;
        // The watch serves the streams, which hold the process; it must not hold it by itself.
        (stream as { socket?: { unref?: () => void } }).socket?.unref?.();
        let rest = "";
        stream.on("data", (chunk: Buffer) => {
          rest += chunk.toString("utf8");
          for (let newline = rest.indexOf("\n"); newline >= 0; newline = rest.indexOf("\n")) {
            const line = rest.slice(0, newline);
            rest = rest.slice(newline + 1);
            try {
              const id = (JSON.parse(line) as { id?: string }).id;
              if (id !== undefined && this.open.has(id)) this.end(id);
            } catch {
              // Not an event: ignored.
            }
          }
        });
        stream.on("error", () => undefined);
        stream.once("close", () => {
          if (this.events === stream) this.events = undefined;
        });
      },
      (error: unknown) => {
        log.debug(`the engine's events cannot be watched: ${(error as Error).message}`);
        if (this.events === pending) this.events = undefined;
      },
    );
  }

  private goIdle(): void {
    clearTimeout(this.idle);
    this.idle = setTimeout(() => this.stop(), IDLE_MS).unref();
  }

  private stop(): void {
    const events = this.events;
    this.events = undefined;
    events?.destroy();
  }
}
