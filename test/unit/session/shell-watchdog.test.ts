import { describe, expect, it } from "vitest";
import { watch } from "../../../src/session/shell-watchdog.js";

const never = new Promise<never>(() => undefined);
const after = <T>(ms: number, value: T) => new Promise<T>((resolve) => setTimeout(() => resolve(value), ms));

describe("watch", () => {
  it("passes an answer that comes in time through", async () => {
    expect(await watch(after(20, "done"), { limitMs: 200, graceMs: 50 })).toEqual({
      kind: "answer",
      value: "done",
    });
  });

  it("passes a failure that comes in time through", async () => {
    await expect(watch(Promise.reject(new Error("boom")), { limitMs: 200, graceMs: 50 })).rejects.toThrow(
      "boom",
    );
  });

  it("gives up on silent work at the limit plus the grace, not before", async () => {
    const started = Date.now();
    const watched = await watch(never, { limitMs: 150, graceMs: 100 });
    expect(watched).toMatchObject({ kind: "silent", cancelled: false });
    expect(Date.now() - started).toBeGreaterThanOrEqual(245);
    expect(Date.now() - started).toBeLessThan(1000);
  });

  it("gives up the grace after a cancel, well before the limit", async () => {
    const cancel = new AbortController();
    setTimeout(() => cancel.abort(), 50);
    const started = Date.now();
    const watched = await watch(never, { limitMs: 60_000, graceMs: 100, signal: cancel.signal });
    expect(watched).toMatchObject({ kind: "silent", cancelled: true });
    expect(Date.now() - started).toBeLessThan(1000);
  });

  it("does not give up on work that answers after a cancel within the grace", async () => {
    const cancel = new AbortController();
    cancel.abort();
    expect(await watch(after(30, 1), { limitMs: 60_000, graceMs: 500, signal: cancel.signal })).toEqual({
      kind: "answer",
      value: 1,
    });
  });
});
