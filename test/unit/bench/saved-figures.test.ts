import { describe, expect, it } from "vitest";

interface Figure {
  median: number;
  p10?: number;
  p90?: number;
  p95?: number;
  n?: number;
  samples?: number[];
}
interface Row {
  group: string;
  name: string;
  unit: string;
  drydock: Figure;
  baseline?: Figure;
  error?: string;
}
interface Entry {
  figure: string;
  verdict: string;
  change?: number;
  ratio?: { saved: number; now: number };
}
interface SavedFiguresModule {
  compareToSaved(rows: Row[], saved: Row[]): Entry[];
  savedFiguresTable(entries: Entry[], date: string): string[];
}

// bench/ is plain JavaScript outside the TypeScript project: loaded by path, typed here.
const path = new URL("../../../bench/lib/saved-figures.mjs", import.meta.url).href;
const load = (): Promise<SavedFiguresModule> => import(path) as Promise<SavedFiguresModule>;

/** A figure from samples, as bench/lib/stats.mjs summarises them (nearest rank). */
function figure(samples: number[]): Figure {
  const s = [...samples].sort((a, b) => a - b);
  const at = (q: number) => s[Math.min(s.length - 1, Math.max(0, Math.ceil(q * s.length) - 1))]!;
  return { median: at(0.5), p10: at(0.1), p90: at(0.9), p95: at(0.95), n: s.length, samples };
}
const around = (centre: number, n = 20) => Array.from({ length: n }, (_, i) => centre + (i % 5) - 2);
const row = (name: string, drydock: Figure, unit = "ms", baseline?: Figure): Row => ({
  group: "g",
  name,
  unit,
  drydock,
  ...(baseline ? { baseline } : {}),
});

describe("bench figures against the saved ones", () => {
  it("calls a figure slower or faster only beyond both runs' spread, and within spread otherwise", async () => {
    const m = await load();
    const saved = [
      row("a", figure(around(100))),
      row("b", figure(around(100))),
      row("c", figure(around(100))),
    ];
    const now = [row("a", figure(around(150))), row("b", figure(around(101))), row("c", figure(around(50)))];
    const verdicts = Object.fromEntries(m.compareToSaved(now, saved).map((e) => [e.figure, e.verdict]));
    expect(verdicts).toEqual({ "g: a": "slower", "g: b": "within spread", "g: c": "faster" });
  });

  it("uses higher and lower for units other than time, and reads saved files that kept only median and p95", async () => {
    const m = await load();
    const saved = [row("mem", { median: 100, p95: 104, n: 30 }, "MiB")];
    const moved = m.compareToSaved([row("mem", figure(around(130)), "MiB")], saved);
    expect(moved[0]!.verdict).toBe("higher");
    const same = m.compareToSaved([row("mem", figure(around(99)), "MiB")], saved);
    expect(same[0]!.verdict).toBe("within spread");
  });

  it("says too few runs to tell under five runs, new for a figure not saved, and counts figures not measured", async () => {
    const m = await load();
    const saved = [row("one", { median: 10, p95: 10, n: 1 }), row("gone", figure(around(10)))];
    const entries = m.compareToSaved(
      [row("one", figure(around(50, 3))), row("fresh", figure(around(5)))],
      saved,
    );
    expect(Object.fromEntries(entries.map((e) => [e.figure, e.verdict]))).toEqual({
      "g: one": "too few runs to tell",
      "g: fresh": "new",
      "g: gone": "not measured now",
    });
    const table = m.savedFiguresTable(entries, "2026-01-01").join("\n");
    expect(table).toContain("(1 saved figures were not measured in this run)");
    expect(table).not.toContain("g: gone");
  });

  it("sets the ratio to the baseline beside the saved one, and skips failed rows", async () => {
    const m = await load();
    const saved = [row("r", figure(around(100)), "ms", figure(around(200)))];
    const now = [
      row("r", figure(around(200)), "ms", figure(around(400))),
      { ...row("x", figure([1])), error: "boom" },
    ];
    const [entry, ...rest] = m.compareToSaved(now, saved);
    expect(entry!.ratio).toEqual({ saved: 0.5, now: 0.5 });
    expect(rest).toEqual([]);
  });
});
