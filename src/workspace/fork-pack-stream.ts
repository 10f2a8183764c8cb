/**
 * A fork's pack past what the host holds (FORK_HELD_PACK_BYTES), streamed from the source's box
 * into the new box: the source's script exports it again on an exec of its own, whose stdout
 * passes through a bounded pipe into the import's stdin, the source's exec paused while the pipe
 * is full. However large the checkpoint, the host holds at most the pipe's bytes of it, and it
 * never opens the pack: it checks that the two lines before it are those the first export gave
 * (the same checkpoint, the same commit), counts the pack's bytes against the checkpoint's limit,
 * and passes the rest on. The new box's git (`index-pack --strict`) checks every object, as it
 * does for a pack that was held.
 */
import { Transform, type TransformCallback } from "node:stream";
import { finished } from "node:stream/promises";
import type { Box } from "../sandbox/box.js";
import { CheckpointDamagedError, CommandExitError, LimitExceededError } from "../util/errors.js";
import { CHECKPOINT_SCRIPT } from "./checkpoint-script.js";

/**
 * The most bytes of a fork's pack the host holds whole (to send it through the new box's channel,
 * and keep it for later forks when it is small: session-fork.ts); a larger pack streams.
 */
export const FORK_HELD_PACK_BYTES = 8 * 1024 * 1024;
/** What the pipe between the two boxes holds on each of its sides. */
const PIPE_BYTES = 1024 * 1024;
/** The two lines before the pack: the base commit in base64 (at most 96 KiB) and a commit id. */
const MAX_HEAD_BYTES = 96 * 1024 + 64;
const TIMEOUT_MS = 120_000;

/** What the first export said: the streamed one must say the same before its pack. */
export interface PackHead {
  baseRaw: string;
  commit: string;
}

/**
 * Passes on what follows the export's two lines, once they are checked to be `head`'s, and fails
 * once more than `maxBytes` have passed. `bytes` counts the pack's bytes.
 */
export class PackAfterHead extends Transform {
  bytes = 0;
  private head: Buffer[] = [];
  private headBytes = 0;
  private passing = false;

  constructor(
    private readonly expected: PackHead,
    private readonly maxBytes: number,
    private readonly name: string,
  ) {
    super({ highWaterMark: PIPE_BYTES });
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, done: TransformCallback): void {
    if (this.passing) return done(this.pass(chunk));
    this.head.push(chunk);
    this.headBytes += chunk.length;
    const held = Buffer.concat(this.head);
    const first = held.indexOf(10);
    const second = first < 0 ? -1 : held.indexOf(10, first + 1);
    if (second < 0) {
      return done(this.headBytes > MAX_HEAD_BYTES ? this.damaged("it sent no pack") : undefined);
    }
    const baseRaw = held.subarray(0, first).toString("latin1");
    const commit = held.subarray(first + 1, second).toString("latin1");
    if (baseRaw !== this.expected.baseRaw || commit !== this.expected.commit) {
      return done(this.damaged("its second export named another commit than its first"));
    }
    this.head = [];
    this.passing = true;
    done(this.pass(held.subarray(second + 1)));
  }

  override _flush(done: TransformCallback): void {
    done(this.passing ? undefined : this.damaged("it sent no pack"));
  }

  private pass(chunk: Buffer): Error | undefined {
    this.bytes += chunk.length;
    if (this.bytes > this.maxBytes) {
      return new LimitExceededError(
        `checkpoint ${JSON.stringify(this.name)} is larger than ${this.maxBytes} bytes once packed; nothing was forked`,
      );
    }
    if (chunk.length > 0) this.push(chunk);
    return undefined;
  }

  private damaged(detail: string): Error {
    return new CheckpointDamagedError(this.name, `the source's box exported it oddly: ${detail}`);
  }
}

/**
 * Exports checkpoint `slot` of `source` again (the script's export, by an exec of its own) and
 * gives its pack as a stream, for one import; `done` settles once the export has ended and its
 * pack was read to its end, and fails as the export or the pack does (the pack is then ended
 * with that error). `signal` ends the export.
 */
export function streamPack(
  source: Box,
  options: {
    slot: string;
    /** The checkpoint's commit (the head names the fork's, which may be another). */
    commit: string;
    name: string;
    head: PackHead;
    includeIgnored: boolean;
    have: string[];
    maxBytes: number;
    signal: AbortSignal;
  },
): { pack: PackAfterHead; done: Promise<void> } {
  const pack = new PackAfterHead(options.head, options.maxBytes, options.name);
  // Its failures are told through `done`; the import may not be reading it yet.
  pack.on("error", () => undefined);
  const args = ["export", options.slot, options.commit, options.includeIgnored ? "1" : "0"];
  const exported = source
    .sh(CHECKPOINT_SCRIPT, args, {
      stdin: Buffer.from(options.have.join("\n") + "\n"),
      stdout: pack,
      maxOutputBytes: 64 * 1024,
      timeoutMs: TIMEOUT_MS,
      signal: options.signal,
    })
    .then((result) => {
      if (result.exitCode === 4) {
        throw new CheckpointDamagedError(options.name, result.stderr.toString("utf8").trim());
      }
      if (result.exitCode !== 0) {
        throw new CommandExitError(
          result.exitCode,
          result.stderr.toString("utf8"),
          `checkpoint ${options.name}`,
        );
      }
      pack.end();
    });
  const done = Promise.all([exported, finished(pack)]).then(
    () => undefined,
    (error: unknown) => {
      pack.destroy(error as Error);
      throw error;
    },
  );
  return { pack, done };
}
