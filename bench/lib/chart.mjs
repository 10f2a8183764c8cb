// An SVG line chart of session ready time against repository size (log scale), no dependency.

const esc = (s) => String(s).replace(/&/g, "&amp;").replace(/</g, "&lt;");

/**
 * `series`: [{ name, color, dashed?, points: [{ x, median, p95 }] }]; x on a log axis, y in ms.
 * Each point is drawn at its median with a thin bar up to its p95.
 */
export function lineChart({ title, xLabel, yLabel, series, caption }) {
  const W = 760;
  const H = 440;
  const m = { left: 70, right: 210, top: 48, bottom: 66 };
  const pw = W - m.left - m.right;
  const ph = H - m.top - m.bottom;
  const xs = [...new Set(series.flatMap((s) => s.points.map((p) => p.x)))].sort((a, b) => a - b);
  const lx = (x) => Math.log10(x);
  const [x0, x1] = [lx(xs[0]), lx(xs[xs.length - 1])];
  const X = (x) => m.left + ((lx(x) - x0) / (x1 - x0 || 1)) * pw;
  const top = Math.max(...series.flatMap((s) => s.points.map((p) => p.p95)));
  const step = niceStep(top / 5);
  const yMax = Math.ceil(top / step) * step;
  const Y = (v) => m.top + ph - (v / yMax) * ph;
  const out = [];
  out.push(`<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" viewBox="0 0 ${W} ${H}" font-family="Helvetica, Arial, sans-serif" font-size="12">`);
  out.push(`<rect width="${W}" height="${H}" fill="#ffffff"/>`);
  out.push(`<text x="${m.left}" y="26" font-size="15" font-weight="bold">${esc(title)}</text>`);
  for (let v = 0; v <= yMax + 1e-9; v += step) {
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

function niceStep(raw) {
  const p = 10 ** Math.floor(Math.log10(raw || 1));
  for (const k of [1, 2, 2.5, 5, 10]) if (raw <= k * p) return k * p;
  return 10 * p;
}

function fmt(v) {
  return v >= 100 ? Math.round(v).toLocaleString("en-US") : v.toFixed(v >= 10 ? 0 : 1);
}
