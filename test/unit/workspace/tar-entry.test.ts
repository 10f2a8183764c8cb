import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, readlinkSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { END_OF_ARCHIVE, encodeTarHeader, paxRecord, tarPadding } from "../../../src/workspace/tar-entry.js";

function archive(entries: Array<{ path: string; content?: Buffer; link?: string; mode?: number }>): Buffer {
  const parts: Buffer[] = [];
  for (const e of entries) {
    const common = { path: e.path, mtimeS: 1_700_000_000, uid: 1000, gid: 1000 };
    if (e.link !== undefined) {
      parts.push(encodeTarHeader({ ...common, type: "symlink", mode: 0o777, size: 0, linkname: e.link }));
    } else {
      const content = e.content ?? Buffer.alloc(0);
      parts.push(encodeTarHeader({ ...common, type: "file", mode: e.mode ?? 0o644, size: content.length }));
      parts.push(content, tarPadding(content.length));
    }
  }
  return Buffer.concat([...parts, END_OF_ARCHIVE]);
}

describe("encodeTarHeader", () => {
  it("writes entries GNU tar extracts exactly: contents, modes, links, long and non-ASCII paths", () => {
    const dir = mkdtempSync(join(tmpdir(), "drydock-tar-"));
    try {
      const long = `${"deep/".repeat(30)}file ünï.txt`;
      const longTarget = "t".repeat(150);
      const bytes = Buffer.from([0, 1, 2, 255, 10]);
      const tar = archive([
        { path: "a.txt", content: Buffer.from("hello\n") },
        { path: "bin/run.sh", content: Buffer.from("#!/bin/sh\n"), mode: 0o755 },
        { path: "data.bin", content: bytes },
        { path: "empty", content: Buffer.alloc(0) },
        { path: "block.txt", content: Buffer.alloc(512, "x") },
        { path: long, content: Buffer.from("deep\n") },
        { path: "link", link: "a.txt" },
        { path: "long-link", link: longTarget },
      ]);
      writeFileSync(join(dir, "t.tar"), tar);
      execFileSync("tar", ["-x", "-f", "t.tar", "--no-same-owner"], { cwd: dir });
      expect(readFileSync(join(dir, "a.txt"), "utf8")).toBe("hello\n");
      expect(statSync(join(dir, "bin/run.sh")).mode & 0o111).not.toBe(0);
      expect(readFileSync(join(dir, "data.bin"))).toEqual(bytes);
      expect(readFileSync(join(dir, "empty")).length).toBe(0);
      expect(readFileSync(join(dir, "block.txt")).length).toBe(512);
      expect(readFileSync(join(dir, long), "utf8")).toBe("deep\n");
      expect(readlinkSync(join(dir, "link"))).toBe("a.txt");
      expect(readlinkSync(join(dir, "long-link"))).toBe(longTarget);
      expect(statSync(join(dir, "a.txt")).mtimeMs).toBe(1_700_000_000_000);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("sizes pax records so the length counts its own digits", () => {
    for (const value of ["x", "y".repeat(95), "z".repeat(996), "ü".repeat(60)]) {
      const record = paxRecord("path", value);
      expect(Number(record.toString("utf8").split(" ")[0])).toBe(record.length);
    }
  });

  it("pads content to whole 512-byte blocks", () => {
    expect(tarPadding(0).length).toBe(0);
    expect(tarPadding(1).length).toBe(511);
    expect(tarPadding(512).length).toBe(0);
    expect(tarPadding(513).length).toBe(511);
  });
});
