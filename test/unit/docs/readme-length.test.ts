/**
 * The README teaches the three uses in a few minutes; everything else lives in docs/. A reader's
 * time is the budget: at most 300 lines, and every docs/ page it links exists.
 */
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";

const root = join(import.meta.dirname, "..", "..", "..");
const readme = readFileSync(join(root, "README.md"), "utf8");

describe("README.md", () => {
  it("is at most 300 lines", () => {
    expect(readme.split("\n").length).toBeLessThanOrEqual(300);
  });

  it("links only files that exist", () => {
    const links = [...readme.matchAll(/\]\(((?:docs\/)?[A-Za-z0-9_./-]+\.md)(?:#[^)]*)?\)/g)].map(
      (m) => m[1]!,
    );
    expect(links.length).toBeGreaterThan(10);
    for (const link of links) expect(existsSync(join(root, link)), link).toBe(true);
  });
});
