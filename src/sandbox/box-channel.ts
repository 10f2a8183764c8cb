/**
 * A channel into a box for the short programs the tools run (file access, git diff): one
 * long-lived program in the box (drydock's box agent: box-agent.ts), started once per box, that
 * runs each request as a child of its own. A request then costs a write and a read on a stream that is
 * already open instead of an exec through the engine (create, start, inspect: tens of ms each
 * time). Sessions start the program while their box is made (session/), so it answers their first
 * request; a box that has none yet starts it at its first request, which runs as an exec
 * meanwhile. Where it cannot run (no python3 in the image) or has gone (the agent killed it),
 * requests run as one exec each, as before, so a caller sees the same results either way.
 */
import { PassThrough } from "node:stream";
import type { ExecOptions, ExecResult } from "../engine/exec.js";
import { CommandTimeoutError } from "../util/errors.js";
import { logger } from "../util/log.js";
import { boxAgentStart } from "./box-agent.js";
import type { Box } from "./box.js";

const log = logger("box");

/** What the program in the box is called in a process listing. */
export const BOX_CHANNEL_NAME = "drydock-box-channel";
/** The program's source arrives on its input (box-agent.ts), so the listing stays short. */
const START = `exec -a ${BOX_CHANNEL_NAME} python3 -I -S -c "$1"`;
const DEFAULT_CAP = 64 * 1024 * 1024;
/** The longest header line the program writes; anything longer means the stream is not ours. */
const MAX_HEADER = 4096;
/** Starts after which a box's requests go by exec for good. */
const MAX_STARTS = 3;
/** A program that has not answered by then is given up on; requests run as execs. */
const START_TIMEOUT_MS = 15_000;

interface Pending {
  cap: number;
  resolve: (result: ExecResult) => void;
  /** The channel ended before the answer came: run the request another way. */
  lost: () => void;
}

interface Answer {
  id: number;
  exit: number;
  out: number;
  err: number;
  truncated: boolean;
}

export class BoxChannel {
  private nextId = 1;
  private readonly pending = new Map<number, Pending>();
  /**
   * What came and is not yet read, as it came: joined only to read a header line, or once an
   * answer's bytes are all here. Joining at every chunk copied a large answer once per chunk (a
   * 20 MB diff in 16 kB frames: about 13 GB of copying, 10 s).
   */
  private chunks: Buffer[] = [];
  private buffered = 0;
  private answer: Answer | undefined;
  private answered = false;
  private done = false;
  private opened: (ok: boolean) => void = () => undefined;
  /** Resolves true once the program answers, false if it ends first. */
  readonly ready = new Promise<boolean>((resolve) => (this.opened = resolve));

  private constructor(private readonly input: PassThrough) {
    // A write after the stream ended must not become an uncaught error.
    input.on("error", () => undefined);
  }

  /** Starts the program in the box; `ready` says whether it runs. */
  static open(box: Box): BoxChannel {
    const agent = boxAgentStart();
    const input = new PassThrough();
    const channel = new BoxChannel(input);
    const ended = box.exec(["bash", "-c", START, "drydock", agent.loader], {
      stdin: input,
      // The stream lives as long as the box; it ends when the box is removed.
      timeoutMs: 2_147_483_647,
      maxOutputBytes: 0,
      onStdout: (chunk) => channel.receive(chunk),
      onStderr: (chunk) => log.debug(`box ${box.shortId} channel: ${chunk.toString("utf8").trim()}`),
    });
    ended.then(
      (result) => channel.end(`the program ended with exit code ${result.exitCode}`),
      (error: unknown) => channel.end(error instanceof Error ? error.message : String(error)),
    );
    input.write(agent.input);
    const late = setTimeout(() => {
      if (!channel.answered) channel.broken(`no answer within ${START_TIMEOUT_MS / 1000} s of its start`);
    }, START_TIMEOUT_MS);
    late.unref();
    void channel.ready.then(() => clearTimeout(late));
    return channel;
  }

  /** True while requests can be sent. */
  get open(): boolean {
    return this.answered && !this.done;
  }

  /** True once the program has ended (or the stream to it broke). */
  get ended(): boolean {
    return this.done;
  }

  /** True when the program ran and answered at least once before it ended. */
  get everOpen(): boolean {
    return this.answered;
  }

  /**
   * Runs argv in the box through the channel; undefined when the channel ended before the answer
   * came (the caller runs it another way). Honours stdin (bytes), timeoutMs, maxOutputBytes and
   * signal as `runExec` does.
   */
  run(
    argv: string[],
    options: ExecOptions = {},
    changes: BoxShOptions["changes"] = false,
    fast?: BoxShOptions["fast"],
  ): Promise<ExecResult | undefined> {
    if (!this.open) return Promise.resolve(undefined);
    if (options.signal?.aborted) return Promise.reject(new Error("cancelled"));
    const id = this.nextId++;
    const cap = options.maxOutputBytes ?? DEFAULT_CAP;
    const timeoutMs = options.timeoutMs ?? 120_000;
    const stdin =
      options.stdin === undefined ? Buffer.alloc(0) : Buffer.from(options.stdin as Buffer | string);
    return new Promise<ExecResult | undefined>((resolve, reject) => {
      const finish = () => {
        clearTimeout(timer);
        options.signal?.removeEventListener("abort", onAbort);
        this.pending.delete(id);
      };
      const stop = (error: Error) => {
        finish();
        // The program kills the request's whole process group; its answer is then dropped.
        if (!this.done) this.input.write(`${JSON.stringify({ id, kill: true })}\n`);
        reject(error);
      };
      const onAbort = () => stop(new Error("cancelled"));
      const timer = setTimeout(() => stop(new CommandTimeoutError(timeoutMs, "")), timeoutMs);
      options.signal?.addEventListener("abort", onAbort, { once: true });
      this.pending.set(id, {
        cap,
        resolve: (result) => {
          finish();
          resolve(result);
        },
        lost: () => {
          finish();
          resolve(undefined);
        },
      });
      const request = {
        id,
        argv,
        stdin: stdin.length,
        cap,
        ...(changes ? { changes } : {}),
        ...(fast ? { fast } : {}),
      };
      const head = Buffer.from(`${JSON.stringify(request)}\n`);
      this.input.write(stdin.length > 0 ? Buffer.concat([head, stdin]) : head);
    });
  }

  /** Ends the program in the box (and whatever it still runs). */
  close(): void {
    this.input.end();
  }

  private receive(chunk: Buffer): void {
    if (this.done) return;
    this.chunks.push(chunk);
    this.buffered += chunk.length;
    for (;;) {
      if (this.answer === undefined) {
        const buffer = this.joined();
        const newline = buffer.indexOf(10);
        if (newline === -1) {
          if (buffer.length > MAX_HEADER) this.broken("it sent a header line without an end");
          return;
        }
        const line = buffer.subarray(0, newline).toString("utf8");
        this.keep(buffer.subarray(newline + 1));
        let head: unknown;
        try {
          head = JSON.parse(line);
        } catch {
          return this.broken(`it sent a line that is not JSON: ${line.slice(0, 80)}`);
        }
        if ((head as { ready?: unknown } | null)?.ready === true) {
          this.answered = true;
          this.opened(true);
          continue;
        }
        const answer = head as Answer;
        const cap = this.pending.get(answer.id)?.cap ?? DEFAULT_CAP;
        const fits = (n: unknown) => Number.isInteger(n) && (n as number) >= 0 && (n as number) <= cap;
        if (!Number.isInteger(answer.exit) || !fits(answer.out) || !fits(answer.err)) {
          return this.broken(`it sent an answer that does not fit its request: ${line.slice(0, 80)}`);
        }
        this.answer = answer;
      }
      const { id, exit, out, err, truncated } = this.answer;
      if (this.buffered < out + err) return;
      const buffer = this.joined();
      const stdout = Buffer.from(buffer.subarray(0, out));
      const stderr = Buffer.from(buffer.subarray(out, out + err));
      this.keep(buffer.subarray(out + err));
      this.answer = undefined;
      this.pending.get(id)?.resolve({ exitCode: exit, stdout, stderr, truncated: truncated === true });
    }
  }

  /** Everything not yet read, as one buffer (kept as one, so the next call does not copy it). */
  private joined(): Buffer {
    if (this.chunks.length !== 1) this.keep(Buffer.concat(this.chunks, this.buffered));
    return this.chunks[0]!;
  }

  private keep(rest: Buffer): void {
    this.chunks = [rest];
    this.buffered = rest.length;
  }

  private broken(why: string): void {
    log.debug(`the box channel stopped: ${why}`);
    this.input.end();
    this.end(why);
  }

  private end(why: string): void {
    if (this.done) return;
    this.done = true;
    this.keep(Buffer.alloc(0));
    this.opened(false);
    log.debug(`box channel ended: ${why}`);
    for (const request of [...this.pending.values()]) request.lost();
  }
}

interface ChannelEntry {
  channel: BoxChannel;
  starts: number;
}

const channels = new WeakMap<Box, ChannelEntry>();

/**
 * Starts the box's channel if it has none (or its last one ended), and resolves when it can take
 * requests (false: requests run as execs). A program that never answers (no python3 in the
 * image) is not started again for that box.
 */
export function openBoxChannel(box: Box): Promise<boolean> {
  const known = channels.get(box);
  if (known !== undefined && !known.channel.ended) return known.channel.ready;
  if (known !== undefined && (known.starts >= MAX_STARTS || !known.channel.everOpen)) {
    return Promise.resolve(false);
  }
  const channel = BoxChannel.open(box);
  channels.set(box, { channel, starts: (known?.starts ?? 0) + 1 });
  return channel.ready;
}

/** Ends the box's channel, if it has one (removing the box ends it too). */
export function closeBoxChannel(box: Box): void {
  channels.get(box)?.channel.close();
}

export interface BoxShOptions extends ExecOptions {
  /**
   * The script brings the diff's index up to date (its add_changes, changed-paths.ts): through
   * the channel, it is told what changed since the last such script (DRYDOCK_CHANGES), once the
   * box's watch runs; "start" also starts it (a session does once it is ready, and each diff and
   * checkpoint asks again, so they follow the change, not the repository: the watch holds one of the kernel's inotify
   * instances, which under runc every box's user shares; where none is left the box's git looks
   * at every file, with the same answers). Only a
   * script that updates that index with it may ask, or the changes it took are lost to the next.
   */
  changes?: boolean | "start";
  /**
   * The program in the box may answer the request itself, without running the script, when it
   * can vouch for the answer being the script's: a checkpoint's save (`{ op: "save", … }`, with
   * `changes`: box-agent/drydock_box/tree.py), a restore (`{ op: "restore", … }`, with `changes`)
   * or a fork's import (`{ op: "import", … }`: restore.py, fork.py there). `{ op: "prime", … }`
   * (with `changes`) runs the script as always, then has the box's tree writer read the tree of
   * the diff's index in the background. Through an exec the script always runs.
   */
  fast?: Record<string, string | number | boolean>;
}

/**
 * Runs a short bash script with positional arguments in the box as `Box.sh` does (same result,
 * same errors), through the box's channel when it has one open. The first request starts the
 * channel and runs as an exec meanwhile, so no request waits for the program to start and a
 * session's start pays nothing for it.
 */
export async function boxSh(
  box: Box,
  script: string,
  args: string[] = [],
  options: BoxShOptions = {},
): Promise<ExecResult> {
  const { changes = false, fast, ...execOptions } = options;
  const plain =
    execOptions.user === undefined &&
    execOptions.workdir === undefined &&
    execOptions.env === undefined &&
    execOptions.onStdout === undefined &&
    execOptions.onStderr === undefined &&
    (execOptions.stdin === undefined ||
      typeof execOptions.stdin === "string" ||
      Buffer.isBuffer(execOptions.stdin));
  if (plain) {
    void openBoxChannel(box);
    const channel = channels.get(box)?.channel;
    if (channel?.open) {
      const result = await channel.run(
        ["bash", "-c", script, "drydock", ...args],
        execOptions,
        changes,
        fast,
      );
      if (result !== undefined) return result;
    }
  }
  return box.sh(script, args, execOptions);
}
