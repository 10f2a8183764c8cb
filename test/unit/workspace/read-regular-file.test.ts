/**
 * readRegularFile: how a warm start reads the host's `.git/index` to hash it. A repository whose
 * index is a link (to a secret outside it), a FIFO (which would block a read forever) or too
 * large gives nothing, and the index is then packed as any other file (a link as a link).
 */
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { readRegularFile } from "../../../src/workspace/snapshot-tar.js";

describe("readRegularFile", () => {
  const dir = mkdtempSync(join(tmpdir(), "drydock-read-"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("reads a regular file, and nothing through a link, from a FIFO, or past the limit", async () => {
    writeFileSync(join(dir, "index"), "DIRC index bytes");
    writeFileSync(join(dir, "secret"), "the user's secret");
    symlinkSync(join(dir, "secret"), join(dir, "linked-index"));
    execFileSync("mkfifo", [join(dir, "fifo-index")]);
    expect((await readRegularFile(join(dir, "index"), 1024))?.toString()).toBe("DIRC index bytes");
    expect(await readRegularFile(join(dir, "linked-index"), 1024)).toBeUndefined();
    expect(await readRegularFile(join(dir, "fifo-index"), 1024)).toBeUndefined();
    expect(await readRegularFile(join(dir, "index"), 4)).toBeUndefined();
    expect(await readRegularFile(join(dir, "missing"), 1024)).toBeUndefined();
    // Past the size read whole ahead of time (1 MiB), still read when under the limit.
    writeFileSync(join(dir, "large-index"), Buffer.alloc(3 << 20, 7));
    expect((await readRegularFile(join(dir, "large-index"), 4 << 20))?.length).toBe(3 << 20);
    expect(await readRegularFile(join(dir, "large-index"), 2 << 20)).toBeUndefined();
  });
});
