/**
 * One program run in a box through the engine's exec API, with stdin, a time limit and capped
 * output. Output is demultiplexed by hand (the 8-byte frame headers of a non-TTY exec) so a
 * stream that ends mid-frame is handled and nothing is buffered beyond the cap.
 */
import type Docker from "dockerode";
import { Readable, type Duplex, type Writable } from "node:stream";
import { CommandTimeoutError } from "../util/errors.js";

export interface ExecOptions {
  user?: string;
  workdir?: string;
  env?: Record<string, string>;
  /** Bytes or a stream written to the program's stdin, which is then closed. */
  stdin?: Buffer | string | Readable;
  /** Default 120_000. */
  timeoutMs?: number;
  /** Per stream; what is past the cap is counted and dropped. Default 64 MiB. */
  maxOutputBytes?: number;
  signal?: AbortSignal;
  /** Called with each stdout chunk as it arrives (before capping), for streaming consumers. */
  onStdout?: (chunk: Buffer) => void;
  onStderr?: (chunk: Buffer) => void;
  /**
   * Where stdout goes instead of the result (whose stdout is then empty), with backpressure: the
   * exec's stream is paused while `stdout` is full, so the program waits rather than the host
   * holding its output, whatever its size. Not ended here: the caller ends it once it knows the
   * exit code.
   */
  stdout?: Writable;
}

/** Writes `chunk` to `to`, pausing `from` until `to` drains when it is full. */
export function writeOrPause(to: Writable, chunk: Buffer, from: { pause(): void; resume(): void }): void {
  if (to.destroyed) return;
  if (!to.write(chunk)) {
    from.pause();
    const resume = () => {
      to.off("drain", resume);
      to.off("close", resume);
      from.resume();
    };
    to.on("drain", resume);
    // A destination that goes (its reader failed) no longer drains: the caller ends the exec.
    to.on("close", resume);
  }
}

export interface ExecResult {
  exitCode: number;
  stdout: Buffer;
  stderr: Buffer;
  /** True when either stream went past maxOutputBytes. */
  truncated: boolean;
}

/** One stream's output up to a cap; what is past it is counted as truncated and dropped. */
export class CappedBuffer {
  private chunks: Buffer[] = [];
  private size = 0;
  truncated = false;
  constructor(private readonly cap: number) {}
  push(chunk: Buffer): void {
    const room = this.cap - this.size;
    if (room <= 0) {
      this.truncated = true;
      return;
    }
    const part = chunk.length > room ? chunk.subarray(0, room) : chunk;
    if (part.length < chunk.length) this.truncated = true;
    // A copy: the stream's (or the socket's) larger buffer is not kept alive by a small slice of it.
    this.chunks.push(Buffer.from(part));
    this.size += part.length;
  }
  value(): Buffer {
    return Buffer.concat(this.chunks);
  }
}

export async function runExec(
  container: Docker.Container,
  argv: string[],
  options: ExecOptions,
  /** Told of the exec's stream once it is open (the engine ends it when the box is removed). */
  onStream?: (stream: Duplex) => void,
): Promise<ExecResult> {
  const timeoutMs = options.timeoutMs ?? 120_000;
  const cap = options.maxOutputBytes ?? 64 * 1024 * 1024;
  const exec = await container.exec({
    Cmd: argv,
    User: options.user,
    WorkingDir: options.workdir,
    Env: options.env ? Object.entries(options.env).map(([k, v]) => `${k}=${v}`) : undefined,
    AttachStdin: options.stdin !== undefined,
    AttachStdout: true,
    AttachStderr: true,
    Tty: false,
  });
  const stream = (await exec.start({ hijack: true, stdin: options.stdin !== undefined })) as Duplex;
  onStream?.(stream);
  const stdout = new CappedBuffer(cap);
  const stderr = new CappedBuffer(cap);

  let pending: Buffer = Buffer.alloc(0);
  stream.on("data", (data: Buffer) => {
    pending = pending.length ? Buffer.concat([pending, data]) : data;
    while (pending.length >= 8) {
      const kind = pending[0];
      const size = pending.readUInt32BE(4);
      if (pending.length < 8 + size) break;
      const payload = pending.subarray(8, 8 + size);
      pending = pending.subarray(8 + size);
      if (kind === 2) {
        options.onStderr?.(payload);
        stderr.push(payload);
      } else if (options.stdout) {
        writeOrPause(options.stdout, payload, stream);
      } else {
        options.onStdout?.(payload);
        stdout.push(payload);
      }
    }
  });

  if (options.stdin !== undefined) {
    const input =
      options.stdin instanceof Readable ? options.stdin : Readable.from([Buffer.from(options.stdin)]);
    input.on("error", (error) => stream.destroy(error));
    input.pipe(stream);
  }

  let timer: NodeJS.Timeout | undefined;
  let onAbort: (() => void) | undefined;
  try {
    await new Promise<void>((resolve, reject) => {
      stream.on("end", resolve);
      stream.on("close", resolve);
      stream.on("error", reject);
      timer = setTimeout(() => {
        stream.destroy();
        reject(new CommandTimeoutError(timeoutMs, stdout.value().toString("utf8")));
      }, timeoutMs);
      if (options.signal) {
        onAbort = () => {
          stream.destroy();
          reject(new Error("cancelled"));
        };
        if (options.signal.aborted) onAbort();
        else options.signal.addEventListener("abort", onAbort, { once: true });
      }
    });
  } finally {
    clearTimeout(timer);
    if (onAbort) options.signal?.removeEventListener("abort", onAbort);
  }
  const info = await exec.inspect();
  return {
    exitCode: info.ExitCode ?? -1,
    stdout: stdout.value(),
    stderr: stderr.value(),
    truncated: stdout.truncated || stderr.truncated,
  };
}
