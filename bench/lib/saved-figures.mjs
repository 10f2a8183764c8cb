// This run's figures against the saved ones (bench/results/latest.json): which moved beyond their
// spread. Machines and days differ, so a figure counts as moved only when each run's median lies
// outside the other's p10-p90 band and, where both runs kept their samples, a Mann-Whitney U test
// says the two differ at the 5 % level. A figure beside a baseline measured in the same run is also
// compared as a ratio to that baseline, which a slower or faster machine moves much less.
import { compare } from "./stats.mjs";

/** The p10-p90 band of a saved or new figure; older saved files hold only median and p95. */
export function band(s) {
  if (s?.p10 !== undefined && s?.p90 !== undefined) return [s.p10, s.p90];
  if (s?.median !== undefined && s?.p95 !== undefined) {
    const half = Math.max(0, s.p95 - s.median);
    return [s.median - half, s.p95];
  }
  return undefined;
}

const inside = (value, range) => range !== undefined && value >= range[0] && value <= range[1];
const key = (row) => `${row.group}: ${row.name}`;
/** Fewer runs than this give no spread to speak of. */
const MIN_RUNS = 5;

/**
 * One entry per figure of either run: { figure, unit, saved, now, change, verdict, test? } where
 * verdict is "slower", "faster" (for ms; "higher"/"lower" for other units), "within spread", "too
 * few runs to tell" (under five runs in either), "new" (not in the saved figures) or "not measured
 * now".
 */
export function compareToSaved(rows, savedRows) {
  const saved = new Map();
  for (const row of savedRows ?? []) {
    // Older files list a second, sample-less copy of some rows; the first one holds the figure.
    if (row.drydock?.median !== undefined && !saved.has(key(row))) saved.set(key(row), row);
  }
  const seen = new Set();
  const out = [];
  for (const row of rows) {
    if (row.error || row.drydock?.median === undefined || seen.has(key(row))) continue;
    seen.add(key(row));
    const before = saved.get(key(row));
    if (before === undefined) {
      out.push({ figure: key(row), unit: row.unit, now: row.drydock.median, verdict: "new" });
      continue;
    }
    out.push({
      figure: key(row),
      unit: row.unit,
      saved: before.drydock.median,
      now: row.drydock.median,
      change: before.drydock.median === 0 ? undefined : row.drydock.median / before.drydock.median - 1,
      ...moved(row.drydock, before.drydock, row.unit),
      ratio: ratioChange(row, before),
    });
  }
  for (const [name, before] of saved) {
    if (!seen.has(name)) out.push({ figure: name, unit: before.unit, saved: before.drydock.median, verdict: "not measured now" });
  }
  return out;
}

function moved(now, before, unit) {
  const runs = Math.min(now.n ?? now.samples?.length ?? 0, before.n ?? before.samples?.length ?? 0);
  if (runs < MIN_RUNS) return { verdict: "too few runs to tell", test: `${runs} run(s)` };
  const apart = !inside(now.median, band(before)) && !inside(before.median, band(now));
  const higher = now.median > before.median;
  const words = unit === "ms" ? ["slower", "faster"] : ["higher", "lower"];
  if (now.samples?.length && before.samples?.length) {
    // Two runs are never paired round by round: an unpaired test.
    const test = compare({ ...now, paired: undefined }, { ...before, paired: undefined });
    const differs = test?.verdict === "lower" || test?.verdict === "higher";
    return { verdict: apart && differs ? words[higher ? 0 : 1] : "within spread", test: `${test.test}, p ${test.p.toFixed(3)}` };
  }
  return { verdict: apart ? words[higher ? 0 : 1] : "within spread", test: "p10-p90 bands" };
}

/** This run's drydock/baseline ratio beside the saved one, where both runs had the baseline. */
function ratioChange(row, before) {
  const r = (x) => (x.baseline?.median ? x.drydock.median / x.baseline.median : undefined);
  const now = r(row);
  const then = r(before);
  return now === undefined || then === undefined ? undefined : { saved: then, now };
}

/** Markdown lines for the comparison: moved figures first. */
export function savedFiguresTable(entries, savedDate) {
  const order = {
    slower: 0,
    higher: 0,
    faster: 1,
    lower: 1,
    "within spread": 2,
    "too few runs to tell": 3,
    new: 4,
    "not measured now": 5,
  };
  const sorted = [...entries].sort((a, b) => order[a.verdict] - order[b.verdict]);
  const f = (x) => (x === undefined ? "" : x.toFixed(1));
  const lines = [
    `against the saved figures (bench/results/latest.json, ${savedDate}):`,
    "| figure | saved median | now | change | verdict | ratio to its baseline, saved → now |",
    "|---|---:|---:|---:|---|---|",
  ];
  const missing = sorted.filter((e) => e.verdict === "not measured now").length;
  for (const e of sorted.filter((x) => x.verdict !== "not measured now")) {
    const change = e.change === undefined ? "" : `${e.change >= 0 ? "+" : ""}${(e.change * 100).toFixed(0)} %`;
    const ratio = e.ratio ? `${e.ratio.saved.toFixed(2)} → ${e.ratio.now.toFixed(2)}` : "";
    const unit = e.unit && e.unit !== "ms" && !e.figure.includes(e.unit) ? ` (${e.unit})` : "";
    lines.push(`| ${e.figure}${unit} | ${f(e.saved)} | ${f(e.now)} | ${change} | ${e.verdict}${e.test ? ` (${e.test})` : ""} | ${ratio} |`);
  }
  if (missing > 0) lines.push(`(${missing} saved figures were not measured in this run)`);
  return lines;
}
