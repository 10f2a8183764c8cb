/**
 * report.html: one self-contained page (no external script, style, font or image) with the
 * summary, a sortable table of tasks, and each task's diff, agent log and test output on a click.
 * The results are embedded as JSON that the page's own script reads. Pure.
 */
import type { AttemptTexts } from "./results-dir.js";
import type { ResultsFile } from "./results-summary.js";
import { REPORT_SCRIPT } from "./html-report-script.js";

/** JSON that is safe inside a <script> element: no "<" (so no "</script>"), no line separators. */
export function scriptSafeJson(value: unknown): string {
  return JSON.stringify(value)
    .replace(/</g, "\\u003c")
    .replace(/\u2028/g, "\\u2028")
    .replace(/\u2029/g, "\\u2029");
}

const STYLE = `
:root { color-scheme: light dark; --bg: #fff; --fg: #1d1f23; --muted: #667; --line: #dde1e6; --card: #f5f7fa;
  --ok: #1a7f37; --bad: #cf222e; --warn: #9a6700; --add: #e6ffec; --del: #ffebe9; --hunk: #ddf4ff; }
@media (prefers-color-scheme: dark) { :root { --bg: #0d1117; --fg: #e6edf3; --muted: #8b949e; --line: #30363d;
  --card: #161b22; --ok: #3fb950; --bad: #f85149; --warn: #d29922; --add: #12261e; --del: #25171c; --hunk: #121d2f; } }
* { box-sizing: border-box; }
body { margin: 0 auto; max-width: 1400px; padding: 24px; font: 14px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif;
  background: var(--bg); color: var(--fg); }
h1 { font-size: 22px; margin: 0 0 4px; } h2 { font-size: 16px; margin: 20px 0 8px; }
#meta, .sub, #count { color: var(--muted); font-size: 12px; }
#summary { display: grid; grid-template-columns: repeat(auto-fill, minmax(170px, 1fr)); gap: 12px; margin: 16px 0; }
.card { background: var(--card); border: 1px solid var(--line); border-radius: 8px; padding: 12px; }
.card .label { color: var(--muted); font-size: 12px; text-transform: uppercase; letter-spacing: .04em; }
.card .value { font-size: 24px; font-weight: 600; }
.toolbar { display: flex; gap: 12px; align-items: center; margin: 8px 0; }
#filter { padding: 6px 8px; border: 1px solid var(--line); border-radius: 6px; background: var(--bg); color: var(--fg); min-width: 260px; }
table { width: 100%; border-collapse: collapse; }
th, td { text-align: left; padding: 6px 8px; border-bottom: 1px solid var(--line); vertical-align: top; }
th { cursor: pointer; user-select: none; white-space: nowrap; position: sticky; top: 0; background: var(--bg); }
tr.task { cursor: pointer; } tr.task:hover { background: var(--card); }
td:last-child { color: var(--muted); max-width: 480px; overflow: hidden; text-overflow: ellipsis; white-space: nowrap; }
.badge { padding: 1px 8px; border-radius: 10px; font-size: 12px; border: 1px solid currentColor; white-space: nowrap; }
.badge.resolved { color: var(--ok); } .badge.unresolved { color: var(--bad); } .badge.not_run, .badge.incomplete { color: var(--muted); }
.badge.flagged { color: var(--bad); font-weight: 600; }
.badge.agent_error, .badge.timeout, .badge.setup_error, .badge.box_error, .badge.error { color: var(--warn); }
.details { padding: 8px 0; }
.tabs { display: flex; gap: 6px; flex-wrap: wrap; margin-bottom: 8px; } .tabs .gap { width: 16px; }
.tabs button { border: 1px solid var(--line); background: var(--card); color: var(--fg); border-radius: 6px; padding: 4px 10px; cursor: pointer; }
.tabs button.on { border-color: var(--fg); font-weight: 600; }
pre.body { margin: 0; padding: 10px; background: var(--card); border: 1px solid var(--line); border-radius: 6px;
  max-height: 560px; overflow: auto; font: 12px/1.4 ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; white-space: pre; }
pre.body span { display: block; } .add { background: var(--add); } .del { background: var(--del); }
.hunk { background: var(--hunk); color: var(--muted); } .file { font-weight: 600; }
.invalid { color: var(--bad); }
`;

function escapeHtml(text: string): string {
  return text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;");
}

/** @param texts each attempt's diff, log and test output, keyed "<task id>#<attempt>". */
export function htmlReport(results: ResultsFile, texts: Record<string, AttemptTexts>): string {
  const title = `drydock eval — ${results.run.agent}: ${results.summary.resolved}/${results.summary.tasks} resolved`;
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'">
<title>${escapeHtml(title)}</title>
<style>${STYLE}</style>
</head>
<body>
<h1 id="title">drydock eval</h1>
<div id="meta"></div>
<div id="summary"></div>
<div id="problems"></div>
<div class="toolbar"><input id="filter" type="search" placeholder="filter tasks by id, status or detail" aria-label="filter tasks"><span id="count"></span></div>
<table id="tasks">
<thead><tr id="head"></tr></thead>
<tbody id="rows"></tbody>
</table>
<noscript>This report needs JavaScript to show its table; results.json holds the same data.</noscript>
<script type="application/json" id="eval-data">${scriptSafeJson({ results, texts })}</script>
<script>${REPORT_SCRIPT}</script>
</body>
</html>
`;
}
