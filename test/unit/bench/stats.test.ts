import { describe, expect, it } from "vitest";

interface Stats {
  median: number;
  p10: number;
  p90: number;
  samples: number[];
  paired?: symbol;
}
interface Versus {
  p: number;
  test: string;
  verdict: string;
}
interface StatsModule {
  stats(samples: number[]): Stats;
  compare(a: Stats, b: Stats): Versus | undefined;
  interleaved(
    runs: number,
    alternatives: Record<string, { run: () => unknown }>,
    options?: { warmup?: number },
  ): Promise<Record<string, Stats>>;
}

// bench/ is plain JavaScript outside the TypeScript project: loaded by path, typed here.
const statsPath = new URL("../../../bench/lib/stats.mjs", import.meta.url).href;
const load = (): Promise<StatsModule> => import(statsPath) as Promise<StatsModule>;

/** A paired pair of figures as `interleaved` makes them, from fixed samples. */
function paired(m: StatsModule, a: number[], b: number[]): [Stats, Stats] {
  const round = Symbol("round");
  return [
    { ...m.stats(a), paired: round },
    { ...m.stats(b), paired: round },
  ];
}

describe("bench statistics", () => {
  it("gives median, p10 and p90 by nearest rank", async () => {
    const m = await load();
    const s = m.stats(Array.from({ length: 30 }, (_, i) => 30 - i));
    expect([s.median, s.p10, s.p90]).toEqual([15, 3, 27]);
  });

  it("calls a difference lower only when the rounds say so beyond noise", async () => {
    const m = await load();
    const base = Array.from({ length: 30 }, (_, i) => 50 + (i % 7));
    const clear = m.compare(
      ...paired(
        m,
        base.map((x) => x - 20),
        base,
      ),
    );
    expect(clear).toMatchObject({ verdict: "lower", test: "sign test, 30 of 30 rounds lower" });
    expect(clear!.p).toBeLessThan(0.001);
    // Half the rounds one way, half the other: noise, whatever the medians.
    const mixed = m.compare(
      ...paired(
        m,
        base.map((x, i) => (i % 2 ? x + 3 : x - 3)),
        base,
      ),
    );
    expect(mixed).toMatchObject({ verdict: "within noise" });
    expect(
      m.compare(
        ...paired(
          m,
          base.map((x) => x + 9),
          base,
        ),
      ),
    ).toMatchObject({ verdict: "higher" });
  });

  it("says when five rounds cannot tell, and uses a rank test for figures not run in turn", async () => {
    const m = await load();
    expect(m.compare(...paired(m, [1, 1, 1, 1, 1], [9, 9, 9, 9, 9]))).toMatchObject({
      verdict: "too few runs to tell",
    });
    const apart = m.compare(m.stats([1, 2, 3, 4, 5, 6, 7, 8]), m.stats([11, 12, 13, 14, 15, 16, 17, 18]));
    expect(apart).toMatchObject({ verdict: "lower", test: "Mann-Whitney U" });
    const overlapping = m.compare(m.stats([1, 3, 5, 7, 9, 11]), m.stats([2, 4, 6, 8, 10, 12]));
    expect(overlapping).toMatchObject({ verdict: "within noise" });
  });

  it("runs alternatives in one loop, each sample paired with the others of its round", async () => {
    const m = await load();
    const order: string[] = [];
    const r = await m.interleaved(
      3,
      { a: { run: () => order.push("a") }, b: { run: () => order.push("b") } },
      { warmup: 0 },
    );
    expect(order.join("")).toBe("abbaab");
    expect(r.a!.samples).toHaveLength(3);
    expect(m.compare(r.a!, r.b!)!.test).toMatch(/^sign test/);
  });
});
