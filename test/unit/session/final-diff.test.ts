import { mkdtempSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import {
  finalDiffBytes,
  finalDiffPath,
  readFinalDiff,
  saveFinalDiff,
} from "../../../src/session/final-diff.js";

describe("a session's kept last diff", () => {
  const dirs: string[] = [];
  afterEach(() => {
    for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
  });
  const state = () => {
    const d = mkdtempSync(join(tmpdir(), "drydock-final-diff-"));
    dirs.push(d);
    return d;
  };

  it("is stored beside the audit log, readable by its owner only, and read back whole", async () => {
    const dir = state();
    const diff = Buffer.from("diff --git a/x b/x\n+1\n");
    const saved = await saveFinalDiff("0123456789ab", diff, dir);
    expect(saved).toEqual({ path: join(dir, "audit", "0123456789ab.diff"), bytes: diff.length, cut: false });
    expect(statSync(saved.path).mode & 0o777).toBe(0o600);
    expect(statSync(join(dir, "audit")).mode & 0o777).toBe(0o700);
    expect(await readFinalDiff("0123456789ab", dir)).toEqual({ diff });
    expect(await readFinalDiff("ffffffffffff", dir)).toBeUndefined();
  });

  it("tightens a file that was there with a looser mode", async () => {
    const dir = state();
    await saveFinalDiff("0123456789ab", Buffer.from("a\n"), dir);
    const path = finalDiffPath("0123456789ab", dir)!;
    writeFileSync(path, "old", { mode: 0o644 });
    await saveFinalDiff("0123456789ab", Buffer.from("b\n"), dir);
    expect(statSync(path).mode & 0o777).toBe(0o600);
  });

  it("keeps a long diff's head up to the cap, cut at a line's end, and says so", async () => {
    const long = Buffer.from("line\n".repeat(100));
    const kept = finalDiffBytes(long, 52);
    expect(kept.toString()).toMatch(/^(line\n){10}\n# drydock: cut at 50 of 500 bytes/);
    const dir = state();
    writeFileSync(join(dir, "x"), "");
    await saveFinalDiff("0123456789ab", Buffer.from("x\n".repeat(2 * 1024 * 1024)), dir);
    const read = await readFinalDiff("0123456789ab", dir);
    expect(read?.cutFromBytes).toBe(4 * 1024 * 1024);
    expect(read!.diff.length).toBeLessThan(2 * 1024 * 1024 + 300);
  });

  it("refuses a name that is not a session id", () => {
    expect(finalDiffPath("../../etc/passwd")).toBeUndefined();
  });
});
