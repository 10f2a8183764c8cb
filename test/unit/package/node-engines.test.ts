/**
 * package.json's `engines.node` promises only Node versions every installed package accepts: the
 * lowest version of each of its ranges must satisfy each package's own `engines.node`.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";

type Version = [number, number, number];

function parse(text: string): Version {
  const [major = 0, minor = 0, patch = 0] = text
    .replace(/\.\*$/, "")
    .split(".")
    .map((n) => Number(n));
  return [major, minor, patch];
}

function compare(a: Version, b: Version): number {
  return a[0] - b[0] || a[1] - b[1] || a[2] - b[2];
}

/** The npm range syntax packages use in engines (>=, >, ^, x.*, bare versions, *, ||). */
function satisfies(version: Version, range: string): boolean {
  return range.split("||").some((alternative) => {
    const parts = alternative
      .trim()
      .replace(/(>=|>|\^|<=|<)\s+/g, "$1")
      .split(/\s+/)
      .filter(Boolean);
    return parts.every((part) => {
      if (part === "*" || part === "x") return true;
      const op = /^(>=|>|\^|<=|<)?(.*)$/.exec(part)!;
      const bound = parse(op[2]!);
      const c = compare(version, bound);
      switch (op[1]) {
        case ">=":
          return c >= 0;
        case ">":
          return c > 0;
        case "<=":
          return c <= 0;
        case "<":
          return c < 0;
        case "^":
          return c >= 0 && version[0] === bound[0];
        default:
          // A bare version: "20" or "6.*" is that major line, "1.2.3" exactly that.
          return op[2]!.split(".").length === 3 && !op[2]!.includes("*") ? c === 0 : version[0] === bound[0];
      }
    });
  });
}

/** The lowest version each alternative of our range allows. */
function lowest(range: string): Version[] {
  return range.split("||").map((alternative) => parse(alternative.trim().replace(/^(>=|\^)\s*/, "")));
}

const root = process.cwd();
const pkg = JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as { engines: { node: string } };
const lock = JSON.parse(readFileSync(join(root, "package-lock.json"), "utf8")) as {
  packages: Record<string, { engines?: { node?: string } | string[]; optional?: boolean }>;
};

/**
 * The MCP Inspector says Node 22.7.5, but its CLI (the only part the tests use) runs on Node 20, as
 * test/integration/inspector.test.ts shows on every run.
 */
const ACCEPTED = new Set(["node_modules/@modelcontextprotocol/inspector"]);

describe("engines.node", () => {
  it("reads ranges as npm does", () => {
    expect(satisfies([20, 19, 0], "^20.19.0 || >=22.12.0")).toBe(true);
    expect(satisfies([20, 0, 0], "^20.19.0 || >=22.12.0")).toBe(false);
    expect(satisfies([22, 13, 0], "^20.19.0 || ^22.13.0 || >=24")).toBe(true);
    expect(satisfies([23, 0, 0], "^20.19.0 || ^22.13.0 || >=24")).toBe(false);
    expect(satisfies([20, 0, 0], "6.* || 8.* || >= 10.*")).toBe(true);
    expect(satisfies([20, 0, 0], ">= 20.16.0")).toBe(false);
  });

  it("promises only versions every installed package accepts", () => {
    const refused: string[] = [];
    for (const [path, entry] of Object.entries(lock.packages)) {
      const range = Array.isArray(entry.engines) ? undefined : entry.engines?.node;
      if (!path || !range || ACCEPTED.has(path)) continue;
      // Optional native bindings (one per platform) are skipped by npm where they do not fit.
      if (entry.optional) continue;
      for (const version of lowest(pkg.engines.node)) {
        if (!satisfies(version, range)) refused.push(`${path} wants ${range}, not ${version.join(".")}`);
      }
    }
    expect(refused).toEqual([]);
  });
});
