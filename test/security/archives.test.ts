/**
 * Archives from a box are never extracted on the host: drydock has no host-side extraction at all.
 * Files go into a box as a tar stream the box extracts for itself; they come out only as bytes
 * read by a program in the box (a diff, a file's content), never as an archive unpacked on the
 * host. So tar's classic attacks (absolute paths, `..`, a symlink then a write through it, a
 * symlink to a sibling directory whose name starts with the destination's, hard links, device
 * nodes, tar bombs) have nothing on the host to attack. This test keeps it that way: it fails the
 * day host code gains a way to unpack an archive, which must then come with a tar-safety helper
 * that refuses links, `..`, absolute paths and devices and caps sizes, and tests of it.
 */
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import { describe, expect, it } from "vitest";

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sourceFiles(path);
    return /\.(ts|mts|js|mjs)$/.test(name) ? [path] : [];
  });
}

/** Ways host code could unpack an archive: a tar library's extractor, the engine's archive export, host tar or docker cp. */
const EXTRACTION: Array<[string, RegExp]> = [
  [
    "tar-stream or tar-fs extract",
    /\b(?:tar|tarFs|tarStream)\s*\.\s*extract\s*\(|import\s*\{[^}]*\bextract\b[^}]*\}\s*from\s*["'](?:tar-stream|tar-fs|tar)["']/,
  ],
  ["the tar package", /from\s*["']tar["']|require\(\s*["']tar["']\s*\)/],
  ["the engine's archive export (GET /containers/{id}/archive)", /\bgetArchive\s*\(|\/archive\b["'`?]/],
  [
    "tar run on the host",
    /\b(?:spawn|spawnSync|execFile|execFileSync|exec|execSync)\s*\(\s*["'`](?:\/usr\/bin\/|\/bin\/)?(?:tar|bsdtar|unzip|cpio)["'`]/,
  ],
  ["docker cp", /["'`]cp["'`]\s*,[^\n]*:\//],
];

describe("archives from a box", () => {
  const root = join(process.cwd(), "src");
  const files = sourceFiles(root);

  it("are never unpacked on the host: no source file can extract one", () => {
    expect(files.length).toBeGreaterThan(50);
    const found: string[] = [];
    for (const file of files) {
      const text = readFileSync(file, "utf8");
      for (const [what, pattern] of EXTRACTION) {
        if (pattern.test(text)) found.push(`${relative(process.cwd(), file)}: ${what}`);
      }
    }
    expect(found).toEqual([]);
  });

  it("the patterns do find extraction code (the check can fail)", () => {
    const samples = [
      'import { extract } from "tar-fs";',
      "const x = tar.extract();",
      "await container.getArchive({ path: '/workspace' });",
      'execFile("tar", ["-xf", file]);',
      'spawn("/usr/bin/unzip", [zip]);',
      'execFileSync("docker", ["cp", `${id}:/workspace`, dest]);',
    ];
    for (const sample of samples) {
      expect(
        EXTRACTION.some(([, pattern]) => pattern.test(sample)),
        sample,
      ).toBe(true);
    }
    // Packing for the box, and the box unpacking for itself, are not host extraction.
    for (const sample of [
      "const pack = tar.pack();",
      'box.exec(["tar", "-x", "-f", "-", "-C", "/workspace"])',
    ]) {
      expect(
        EXTRACTION.some(([, pattern]) => pattern.test(sample)),
        sample,
      ).toBe(false);
    }
  });
});
