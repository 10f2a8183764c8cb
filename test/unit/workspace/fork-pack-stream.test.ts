/**
 * What the host checks of a fork's pack as it streams from one box to another (PackAfterHead):
 * the two lines before it must be those the first export gave, its bytes count against the
 * checkpoint's limit, and everything after the lines passes on as it came.
 */
import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { describe, expect, it } from "vitest";
import { PackAfterHead } from "../../../src/workspace/fork-pack-stream.js";
import { CheckpointDamagedError, LimitExceededError } from "../../../src/util/errors.js";

const head = { baseRaw: "dHJlZSBhYmMK", commit: "a".repeat(40) };

/** Runs `chunks` through a PackAfterHead; what came out, or the error. */
async function through(chunks: Buffer[], maxBytes = 1 << 20) {
  const pack = new PackAfterHead(head, maxBytes, "k");
  const out: Buffer[] = [];
  try {
    await pipeline(Readable.from(chunks), pack, async (source: AsyncIterable<Buffer>) => {
      for await (const chunk of source) out.push(chunk);
    });
    return { out: Buffer.concat(out), bytes: pack.bytes };
  } catch (error) {
    return { error };
  }
}

describe("a fork's streamed pack", () => {
  it("passes on what follows the two lines, however the chunks fall", async () => {
    const body = Buffer.from("PACK\x00\x00\x00\x02 whatever bytes\n\nfollow");
    const whole = Buffer.concat([Buffer.from(`${head.baseRaw}\n${head.commit}\n`), body]);
    for (const size of [1, 3, 7, 13, whole.length]) {
      const chunks: Buffer[] = [];
      for (let at = 0; at < whole.length; at += size) chunks.push(whole.subarray(at, at + size));
      const result = await through(chunks);
      expect(result.out?.equals(body)).toBe(true);
      expect(result.bytes).toBe(body.length);
    }
  });

  it("refuses lines other than the first export's, passing nothing on", async () => {
    const other = await through([Buffer.from(`${head.baseRaw}\n${"b".repeat(40)}\nPACK`)]);
    expect(other.error).toBeInstanceOf(CheckpointDamagedError);
    const base = await through([Buffer.from(`eA==\n${head.commit}\nPACK`)]);
    expect(base.error).toBeInstanceOf(CheckpointDamagedError);
  });

  it("refuses a stream that ends before its pack, or whose lines never end", async () => {
    expect((await through([Buffer.from(`${head.baseRaw}\n${head.commit}`)])).error).toBeInstanceOf(
      CheckpointDamagedError,
    );
    expect((await through([Buffer.alloc(200 * 1024, 65)])).error).toBeInstanceOf(CheckpointDamagedError);
  });

  it("refuses a pack past the checkpoint's limit", async () => {
    const lines = Buffer.from(`${head.baseRaw}\n${head.commit}\n`);
    const at = await through([lines, Buffer.alloc(1000)], 1000);
    expect(at.bytes).toBe(1000);
    const over = await through([lines, Buffer.alloc(600), Buffer.alloc(401)], 1000);
    expect(over.error).toBeInstanceOf(LimitExceededError);
    expect((over.error as Error).message).toContain("larger than 1000 bytes once packed");
  });
});
