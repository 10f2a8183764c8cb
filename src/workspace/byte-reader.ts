/**
 * Lines and counted bytes read from a stream, one pull at a time: the answers of
 * `git cat-file --batch`, a header line and then exactly as many bytes as it says.
 */
import type { Readable } from "node:stream";

export class ByteReader {
  private buffer: Buffer = Buffer.alloc(0);
  private readonly chunks: AsyncIterator<Buffer>;

  constructor(stream: Readable) {
    this.chunks = stream[Symbol.asyncIterator]() as AsyncIterator<Buffer>;
  }

  private async fill(): Promise<boolean> {
    const next = await this.chunks.next();
    if (next.done) return false;
    this.buffer = this.buffer.length ? Buffer.concat([this.buffer, next.value]) : next.value;
    return true;
  }

  async line(): Promise<string> {
    for (;;) {
      const at = this.buffer.indexOf(10);
      if (at >= 0) {
        const line = this.buffer.subarray(0, at).toString("utf8");
        this.buffer = this.buffer.subarray(at + 1);
        return line;
      }
      if (!(await this.fill())) throw new Error("git cat-file ended early");
    }
  }

  /** Yields exactly `size` bytes, as they arrive. */
  async *take(size: number): AsyncGenerator<Buffer> {
    let left = size;
    while (left > 0) {
      if (this.buffer.length === 0 && !(await this.fill())) throw new Error("git cat-file ended early");
      const part = this.buffer.subarray(0, Math.min(left, this.buffer.length));
      this.buffer = this.buffer.subarray(part.length);
      left -= part.length;
      yield part;
    }
  }

  async skip(size: number): Promise<void> {
    for await (const part of this.take(size)) void part;
  }

  async all(size: number): Promise<Buffer> {
    const parts: Buffer[] = [];
    for await (const part of this.take(size)) parts.push(part);
    return Buffer.concat(parts);
  }
}
