import type { PassThrough } from "node:stream";
import { describe, expect, it } from "vitest";
import type { ExecOptions, ExecResult } from "../../../src/engine/exec.js";
import { boxSh, openBoxChannel } from "../../../src/sandbox/box-channel.js";
import type { Box } from "../../../src/sandbox/box.js";

type Reply = (request: { id: number; argv: string[]; cap: number }, send: (data: Buffer) => void) => void;

/**
 * A stand-in for a box: `exec` plays the channel's program (answering through `reply`, or ending
 * at once when there is none, as with no python3), and `sh` is the exec per request it falls back to.
 */
function fakeBox(reply?: Reply) {
  const calls = { exec: 0, sh: 0 };
  const box = {
    shortId: "fake",
    exec(_argv: string[], options: ExecOptions = {}): Promise<ExecResult> {
      calls.exec++;
      const done: ExecResult = {
        exitCode: 127,
        stdout: Buffer.alloc(0),
        stderr: Buffer.alloc(0),
        truncated: false,
      };
      if (reply === undefined) return Promise.resolve(done);
      const input = options.stdin as PassThrough;
      // As from a real box: answers arrive on a later turn of the event loop.
      const send = (data: Buffer) => void setImmediate(() => options.onStdout?.(data));
      let buffered = "";
      // The box agent's two lines come first (its bootstrap, then its modules: box-agent.ts).
      let preamble = 2;
      return new Promise<ExecResult>((resolve) => {
        input.on("data", (chunk: Buffer) => {
          buffered += chunk.toString("utf8");
          for (let nl = buffered.indexOf("\n"); nl !== -1; nl = buffered.indexOf("\n")) {
            const line = buffered.slice(0, nl);
            buffered = buffered.slice(nl + 1);
            if (preamble > 0) {
              if (--preamble === 0) send(Buffer.from('{"ready": true}\n'));
              continue;
            }
            const request = JSON.parse(line) as { id: number; argv: string[]; cap: number; kill?: boolean };
            if (!request.kill) reply(request, send);
          }
        });
        input.on("end", () => resolve(done));
      });
    },
    sh(script: string, args: string[] = []): Promise<ExecResult> {
      calls.sh++;
      return Promise.resolve({
        exitCode: 0,
        stdout: Buffer.from(`by exec: ${args.join(" ")}`),
        stderr: Buffer.alloc(0),
        truncated: false,
      });
    },
  };
  return { box: box as unknown as Box, calls };
}

function answer(id: number, out: string, extra: Record<string, unknown> = {}): Buffer {
  const head = { id, exit: 0, out: Buffer.byteLength(out), err: 0, truncated: false, ...extra };
  return Buffer.from(`${JSON.stringify(head)}\n${out}`);
}

describe("boxSh", () => {
  it("runs the first request as an exec while the channel starts", async () => {
    const { box, calls } = fakeBox((request, send) => send(answer(request.id, "by channel")));
    expect((await boxSh(box, "echo", ["first"])).stdout.toString()).toBe("by exec: first");
    expect(await openBoxChannel(box)).toBe(true);
    expect((await boxSh(box, "echo", ["next"])).stdout.toString()).toBe("by channel");
    expect(calls).toEqual({ exec: 1, sh: 1 });
  });

  it("runs each request as an exec when the channel's program cannot start, and tries it once", async () => {
    const { box, calls } = fakeBox();
    expect((await boxSh(box, "echo", ["one"])).stdout.toString()).toBe("by exec: one");
    expect((await boxSh(box, "echo", ["two"])).stdout.toString()).toBe("by exec: two");
    expect(calls).toEqual({ exec: 1, sh: 2 });
  });

  it("reads answers however the stream cuts them, and no exec is made per request", async () => {
    const { box, calls } = fakeBox((request, send) => {
      const bytes = answer(request.id, `ran ${request.argv.slice(4).join(" ")}`);
      for (const byte of bytes) send(Buffer.from([byte]));
    });
    expect(await openBoxChannel(box)).toBe(true);
    const results = await Promise.all([boxSh(box, "x", ["a"]), boxSh(box, "x", ["b"])]);
    expect(results.map((r) => r.stdout.toString())).toEqual(["ran a", "ran b"]);
    expect(calls).toEqual({ exec: 1, sh: 0 });
  });

  it("gives up a channel that sends what is not an answer, and runs the request as an exec", async () => {
    const { box, calls } = fakeBox((_request, send) => send(Buffer.from("not json\n")));
    expect(await openBoxChannel(box)).toBe(true);
    expect((await boxSh(box, "x", ["a"])).stdout.toString()).toBe("by exec: a");
    expect(calls.sh).toBe(1);
  });

  it("refuses an answer longer than the request's output cap", async () => {
    const { box, calls } = fakeBox((request, send) => send(answer(request.id, "x".repeat(100))));
    expect(await openBoxChannel(box)).toBe(true);
    const result = await boxSh(box, "x", ["a"], { maxOutputBytes: 10 });
    expect(result.stdout.toString()).toBe("by exec: a");
    expect(calls.sh).toBe(1);
  });
});
