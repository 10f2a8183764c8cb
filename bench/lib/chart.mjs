// An SVG line chart of session ready time against repository size (log scales), no dependency.

const esc = (s) => String(s).replace(/&/g, "&amp;").replace(/</g, "&lt;");

/**
 * `series`: [{ name, color, dashed?, points: [{ x, median, p95 }] }]; x on a log axis, y in ms.
 * Each point is drawn at its median with a thin bar up to its p95.
 */
export function lineChart({ title, xLabel, yLabel, series, caption }) {
  const W = 900;
  const H = 460;
  const m = { left: 70, right: 300, top: 48, bottom: 66 };
  const pw = W - m.left - m.right;
  const ph = H - m.top - m.bottom;
  const xs = [...new Set(series.flatMap((s) => s.points.map((p) => p.x)))].sort((a, b) => a - b);
  const lx = (x) => Math.log10(x);
  const [x0, x1] = [lx(xs[0]), lx(xs[xs.length - 1])];
  const X = (x) => m.left + ((lx(x) - x0) / (x1 - x0 || 1)) * pw;
  // A log y axis: sub-100 ms warm starts and multi-second copies on one chart.
  const values = series.flatMap((s) => s.points.flatMap((p) => [p.median, p.p95]));
  const ticks = logTicks(Math.min(...values), Math.max(...values));
  const [y0, y1] = [Math.log10(ticks[0]), Math.log10(ticks[ticks.length - 1])];
  const Y = (v) => m.top + ph - ((Math.log10(v) - y0) / (y1 - y0)) * ph;
  const out = [];
  out.push(`<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" viewBox="0 0 ${W} ${H}" font-family="Helvetica, Arial, sans-serif" font-size="12">`);
  out.push(`<rect width="${W}" height="${H}" fill="#ffffff"/>`);
  out.push(`<text x="${m.left}" y="26" font-size="15" font-weight="bold">${esc(title)}</text>`);
  for (const v of ticks) {
    out.push(`<line x1="${m.left}" x2="${m.left + pw}" y1="${Y(v)}" y2="${Y(v)}" stroke="#e3e3e3"/>`);
    out.push(`<text x="${m.left - 8}" y="${Y(v) + 4}" text-anchor="end" fill="#444">${fmt(v)}</text>`);
  }
  for (const x of xs) {
    out.push(`<line x1="${X(x)}" x2="${X(x)}" y1="${m.top}" y2="${m.top + ph}" stroke="#f0f0f0"/>`);
    out.push(`<text x="${X(x)}" y="${m.top + ph + 18}" text-anchor="middle" fill="#444">${x.toLocaleString("en-US")}</text>`);
  }
  out.push(`<line x1="${m.left}" x2="${m.left}" y1="${m.top}" y2="${m.top + ph}" stroke="#888"/>`);
  out.push(`<line x1="${m.left}" x2="${m.left + pw}" y1="${m.top + ph}" y2="${m.top + ph}" stroke="#888"/>`);
  out.push(`<text x="${m.left + pw / 2}" y="${H - 24}" text-anchor="middle" fill="#222">${esc(xLabel)}</text>`);
  out.push(`<text transform="translate(18 ${m.top + ph / 2}) rotate(-90)" text-anchor="middle" fill="#222">${esc(yLabel)}</text>`);
  series.forEach((s, i) => {
    const pts = s.points.map((p) => `${X(p.x).toFixed(1)},${Y(p.median).toFixed(1)}`).join(" ");
    const dash = s.dashed ? ` stroke-dasharray="6 4"` : "";
    out.push(`<polyline points="${pts}" fill="none" stroke="${s.color}" stroke-width="2.5"${dash}/>`);
    for (const p of s.points) {
      out.push(`<line x1="${X(p.x)}" x2="${X(p.x)}" y1="${Y(p.median)}" y2="${Y(p.p95)}" stroke="${s.color}" stroke-width="1" opacity="0.6"/>`);
      out.push(`<circle cx="${X(p.x)}" cy="${Y(p.median)}" r="4" fill="${s.color}"><title>${esc(s.name)}: ${fmt(p.median)} ms median, ${fmt(p.p95)} ms p95</title></circle>`);
    }
    const ly = m.top + 10 + i * 24;
    const lx0 = m.left + pw + 18;
    out.push(`<line x1="${lx0}" x2="${lx0 + 26}" y1="${ly}" y2="${ly}" stroke="${s.color}" stroke-width="2.5"${dash}/>`);
    out.push(`<text x="${lx0 + 32}" y="${ly + 4}" fill="#222">${esc(s.name)}</text>`);
  });
  if (caption) out.push(`<text x="${m.left}" y="${H - 6}" fill="#666" font-size="11">${esc(caption)}</text>`);
  out.push("</svg>");
  return out.join("\n") + "\n";
}

/** 1-2-5 ticks from below `min` to above `max`. */
function logTicks(min, max) {
  const ticks = [];
  for (let decade = 10 ** Math.floor(Math.log10(min)); decade <= max * 10; decade *= 10) {
    for (const k of [1, 2, 5]) ticks.push(k * decade);
  }
  const low = ticks.filter((t) => t <= min).pop() ?? ticks[0];
  const high = ticks.find((t) => t >= max) ?? ticks[ticks.length - 1];
  return ticks.filter((t) => t >= low && t <= high);
}

/** The chart of session ready time against repository size, from a results file's series. */
export function sessionReadyChart(results) {
  const ready = results.series.sessionReady;
  const series = [
    ["cold, first time (snapshot cache empty)", "#c0392b", (p) => p.first],
    ["cold (snapshot cache warm)", "#e67e22", (p) => p.cold],
    ["warm (box from the pool)", "#27ae60", (p) => p.warm],
    ["docker run + docker cp", "#555555", (p) => p.docker, true],
  ].map(([name, color, pick, dashed]) => ({
    name,
    color,
    dashed,
    points: ready.map((p) => ({ x: p.files, median: pick(p).median, p95: pick(p).p95 })),
  }));
  const m = results.machine;
  return lineChart({
    title: "drydock: session ready time against repository size",
    xLabel: "files in the repository (log scale)",
    yLabel: "ms until ready, log scale (median; bar to p95)",
    series,
    caption: `${m.cpus} cores (${m.model}), ${m.memoryGiB} GiB, Docker ${m.engine}; BENCH_RUNS=${results.runs}; ${results.date.slice(0, 10)}`,
  });
}

function fmt(v) {
  return v >= 100 ? Math.round(v).toLocaleString("en-US") : v.toFixed(v >= 10 ? 0 : 1);
}
