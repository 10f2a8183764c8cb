import { spawn } from "node:child_process";
import { hostname } from "node:os";
import { describe, expect, it } from "vitest";
import { ownerIsDead, processStartTicks } from "../../../src/engine/labels.js";

/** A child of a shell that then becomes `sleep`, which never collects it: once killed, a zombie. */
async function childOfParentThatNeverWaits(): Promise<{ pid: number; stop: () => void }> {
  const parent = spawn("sh", ["-c", 'sleep 300 & echo "$!"; exec sleep 300'], {
    stdio: ["ignore", "pipe", "ignore"],
  });
  const pid = await new Promise<number>((resolve) =>
    parent.stdout.once("data", (d: Buffer) => resolve(Number(d.toString().trim()))),
  );
  return { pid, stop: () => parent.kill("SIGKILL") };
}

describe("ownerIsDead", () => {
  it("judges a live process alive, and the same pid with another start time dead", () => {
    const owner = { host: hostname(), pid: process.pid, startTicks: processStartTicks(process.pid) };
    expect(owner.startTicks).not.toBe("");
    expect(ownerIsDead(owner)).toBe(false);
    expect(ownerIsDead({ ...owner, startTicks: "1" })).toBe(true);
  });

  it("judges a killed process its parent has not collected (a zombie) dead", async () => {
    const child = await childOfParentThatNeverWaits();
    try {
      const owner = { host: hostname(), pid: child.pid, startTicks: processStartTicks(child.pid) };
      expect(ownerIsDead(owner)).toBe(false);
      process.kill(child.pid, "SIGKILL");
      await expect.poll(() => ownerIsDead(owner)).toBe(true);
      // Still there for signal 0: only its state says it is gone.
      expect(() => process.kill(child.pid, 0)).not.toThrow();
    } finally {
      child.stop();
    }
  });

  it("never judges an owner on another host dead", () => {
    expect(ownerIsDead({ host: `not-${hostname()}`, pid: 999_999_999, startTicks: "1" })).toBe(false);
  });
});
