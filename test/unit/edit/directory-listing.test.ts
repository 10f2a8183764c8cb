import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import {
  formatDirectoryListing,
  listingCommand,
  parseFindListing,
} from "../../../src/tools/edit/directory-listing.js";

describe("formatDirectoryListing", () => {
  it("renders two levels, sorted, directories marked, hidden entries skipped", () => {
    const listing = formatDirectoryListing("/workspace", [
      { path: "src", type: "directory" },
      { path: "README.md", type: "file" },
      { path: "src/index.ts", type: "file" },
      { path: "src/deep/x.ts", type: "file" },
      { path: ".git", type: "directory" },
      { path: "src/.cache", type: "directory" },
      { path: "lib", type: "symlink" },
      { path: "a-b", type: "file" },
      { path: "src/util", type: "directory" },
    ]);
    expect(listing.split("\n")).toEqual([
      "/workspace/ (2 levels deep, hidden entries skipped)",
      "/workspace/README.md",
      "/workspace/a-b",
      "/workspace/lib@",
      "/workspace/src/",
      "/workspace/src/index.ts",
      "/workspace/src/util/",
    ]);
  });

  it("accepts absolute paths under the root and ignores paths outside it", () => {
    const listing = formatDirectoryListing("/workspace/", [
      { path: "/workspace/a.txt", type: "file" },
      { path: "/elsewhere/b.txt", type: "file" },
      { path: "../c.txt", type: "file" },
    ]);
    expect(listing).toContain("/workspace/a.txt");
    expect(listing).not.toContain("b.txt");
    expect(listing).not.toContain("c.txt");
  });

  it("says when a directory is empty and when entries were cut", () => {
    expect(formatDirectoryListing("/w", [])).toMatch(/\[no entries\]$/);
    const many = Array.from({ length: 30 }, (_, i) => ({
      path: `f${String(i).padStart(2, "0")}`,
      type: "file" as const,
    }));
    const listing = formatDirectoryListing("/w", many, { maxEntries: 10 });
    expect(listing).toContain("/w/f09");
    expect(listing).not.toContain("/w/f10");
    expect(listing).toMatch(/\[20 more entries not shown/);
  });
});

describe("listingCommand with GNU find", () => {
  const root = mkdtempSync(join(tmpdir(), "drydock-listing-"));
  afterAll(() => rmSync(root, { recursive: true, force: true }));

  it("lists what the formatter expects, hidden entries pruned", () => {
    mkdirSync(join(root, "src/deep/deeper"), { recursive: true });
    mkdirSync(join(root, ".git/objects"), { recursive: true });
    writeFileSync(join(root, "src/a.ts"), "");
    writeFileSync(join(root, "src/deep/deeper/x.ts"), "");
    writeFileSync(join(root, ".env"), "");
    writeFileSync(join(root, "name with\ttab and\nnewline"), "");
    symlinkSync("/etc/passwd", join(root, "link"));
    const [command, ...args] = listingCommand(root);
    const output = execFileSync(command as string, args, { encoding: "utf8" });
    const entries = parseFindListing(output);
    expect(entries).toContainEqual({ path: "src/deep", type: "directory" });
    expect(entries).toContainEqual({ path: "link", type: "symlink" });
    expect(entries).toContainEqual({ path: "name with\ttab and\nnewline", type: "file" });
    expect(entries.some((e) => e.path.includes(".git") || e.path.includes(".env"))).toBe(false);
    expect(entries.some((e) => e.path.includes("deeper"))).toBe(false);
    const listing = formatDirectoryListing(root, entries);
    expect(listing).toContain(`${root}/src/deep/`);
    expect(listing).toContain(`${root}/link@`);
  });

  it("keeps a root that starts with a dash from being read as an option", () => {
    expect(listingCommand("-delete")[1]).toBe("./-delete");
  });
});
