import { describe, expect, it } from "vitest";
import { fitsBeside, pickSlot } from "../../../src/eval/engine-pool.js";

const slot = (name: string, capacityMB: number, usedMB = 0, running = 0, dead?: string) => ({
  name,
  capacityMB,
  usedMB,
  running,
  dead,
});

describe("pickSlot", () => {
  it("puts a box on the live engine with the most memory free, the first on a tie", () => {
    expect(pickSlot([slot("a", 8192, 4096, 2), slot("b", 8192, 1024, 1)], 1024)?.name).toBe("b");
    expect(pickSlot([slot("a", 4096), slot("b", 4096)], 1024)?.name).toBe("a");
    expect(pickSlot([slot("a", 16_384, 2048, 1), slot("b", 4096)], 1024)?.name).toBe("a");
    expect(pickSlot([slot("a", 8192, 0, 0, "gone"), slot("b", 1024, 512, 1)], 512)?.name).toBe("b");
  });

  it("has no place when every engine is full or dead, and an idle engine always takes one box", () => {
    expect(pickSlot([slot("a", 2048, 2048, 1), slot("b", 2048, 1536, 1)], 1024)).toBeUndefined();
    expect(pickSlot([slot("a", 2048, 0, 0, "gone")], 512)).toBeUndefined();
    expect(pickSlot([slot("a", 1024)], 4096)?.name).toBe("a");
  });
});

describe("fitsBeside", () => {
  it("takes a second box only while the engine's memory holds it, and none on a dead engine", () => {
    expect(fitsBeside(slot("a", 8192, 2048, 1), 2048)).toBe(true);
    expect(fitsBeside(slot("a", 4096, 2048, 1), 2048)).toBe(true);
    expect(fitsBeside(slot("a", 4096, 3072, 1), 2048)).toBe(false);
    expect(fitsBeside(slot("a", 8192, 0, 0, "gone"), 1024)).toBe(false);
  });
});
