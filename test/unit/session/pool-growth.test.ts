import { describe, expect, it } from "vitest";
import { growthVerdict, largestBurst, poolTarget } from "../../../src/session/pool-growth.js";

describe("poolTarget", () => {
  it("keeps the base when few sessions asked, and rises to the demand", () => {
    expect(poolTarget(2, 8, 0)).toBe(2);
    expect(poolTarget(2, 8, 1)).toBe(2);
    expect(poolTarget(2, 8, 6)).toBe(6);
  });

  it("never passes the ceiling, however many sessions asked", () => {
    expect(poolTarget(2, 8, 100)).toBe(8);
    expect(poolTarget(1, 1, 100)).toBe(1);
  });
});

describe("growthVerdict", () => {
  const room = (fit: number) => ({ fit, why: `${fit} fit: the numbers` });

  it("grows while admission leaves a place beside the boxes past the base", () => {
    expect(growthVerdict(0, room(5)).grow).toBe(true);
    expect(growthVerdict(3, room(5)).grow).toBe(true);
  });

  it("stops one place short of what fits, and at nothing", () => {
    expect(growthVerdict(4, room(5)).grow).toBe(false);
    expect(growthVerdict(0, room(1)).grow).toBe(false);
    expect(growthVerdict(0, room(0)).grow).toBe(false);
    expect(growthVerdict(7, room(3)).grow).toBe(false);
  });

  it("says its numbers and admission's reason", () => {
    const { text } = growthVerdict(2, room(3));
    expect(text).toBe(
      "it holds 2 boxes past its base, so it makes no more (it leaves one place for a session it does not serve): 3 fit: the numbers",
    );
    expect(growthVerdict(1, room(3)).text).toBe(
      "it holds 1 box past its base, so it makes one more: 3 fit: the numbers",
    );
  });
});

describe("largestBurst", () => {
  it("counts the most asks within one span", () => {
    expect(largestBurst([])).toBe(0);
    expect(largestBurst([0, 10, 20, 30, 40, 50], 60_000)).toBe(6);
    expect(largestBurst([0, 100, 200_000, 200_050, 200_100], 60_000)).toBe(3);
  });

  it("sees no burst in asks spread out in time", () => {
    expect(largestBurst([0, 60_000, 120_000, 180_000, 240_000], 60_000)).toBe(1);
  });
});
