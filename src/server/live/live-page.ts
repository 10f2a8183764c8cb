/**
 * The live page's HTML and style, as text. The page holds no data and no credential: its script
 * (live-script.ts) signs in and fetches the data from the same origin, and puts every text in with
 * textContent. The policy allows this origin's script, style and connections only: no inline
 * script, nothing from elsewhere.
 */

export const LIVE_CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

export const LIVE_STYLE = `
:root { color-scheme: light dark; --bg: #fff; --fg: #1d1f23; --muted: #667; --line: #dde1e6; --card: #f5f7fa;
  --ok: #1a7f37; --bad: #cf222e; --warn: #9a6700; --add: #e6ffec; --del: #ffebe9; --hunk: #ddf4ff; --sel: #eaf2ff; }
@media (prefers-color-scheme: dark) { :root { --bg: #0d1117; --fg: #e6edf3; --muted: #8b949e; --line: #30363d;
  --card: #161b22; --ok: #3fb950; --bad: #f85149; --warn: #d29922; --add: #12261e; --del: #25171c; --hunk: #121d2f; --sel: #1b2a40; } }
* { box-sizing: border-box; }
body { margin: 0; padding: 16px 20px; font: 14px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif;
  background: var(--bg); color: var(--fg); }
h1 { font-size: 20px; margin: 0 0 2px; } h2 { font-size: 15px; margin: 16px 0 6px; overflow-wrap: anywhere; }
.sub, #status { color: var(--muted); font-size: 12px; }
#status.down { color: var(--bad); }
/* One column (the table above the detail) until there is room for both side by side. Every track
   may shrink below its content (minmax(0, …)): long text wraps or scrolls inside its own box. */
main { display: grid; grid-template-columns: minmax(0, 1fr); gap: 20px; margin-top: 12px; }
main > section { min-width: 0; }
@media (min-width: 1400px) { main { grid-template-columns: minmax(440px, 1fr) minmax(0, 2.4fr); } }
.table-wrap { overflow-x: auto; max-height: 40vh; overflow-y: auto; }
@media (min-width: 1400px) { .table-wrap { max-height: none; } }
table { width: 100%; border-collapse: collapse; table-layout: fixed; }
th, td { text-align: left; padding: 5px 8px; border-bottom: 1px solid var(--line); vertical-align: top;
  white-space: nowrap; overflow: hidden; text-overflow: ellipsis; }
th.id { width: 9.5em; } th.age { width: 4.5em; } th.state { width: 5.5em; } th.calls { width: 3.8em; } th.cost { width: 5.5em; }
td.id { font-variant-numeric: tabular-nums; }
tr.session { cursor: pointer; } tr.session:hover { background: var(--card); } tr.session.on { background: var(--sel); }
.badge { padding: 0 7px; border-radius: 10px; font-size: 12px; border: 1px solid currentColor; }
.badge.alive { color: var(--ok); } .badge.ended, .badge.gone { color: var(--muted); }
.facts { display: grid; grid-template-columns: repeat(auto-fill, minmax(150px, 1fr)); gap: 8px; }
.card { background: var(--card); border: 1px solid var(--line); border-radius: 8px; padding: 8px 10px; min-width: 0; }
.card .label { color: var(--muted); font-size: 11px; text-transform: uppercase; letter-spacing: .04em; }
.card .value { font-size: 16px; font-weight: 600; overflow-wrap: anywhere; }
.box { margin: 0; padding: 8px 10px; background: var(--card); border: 1px solid var(--line); border-radius: 6px;
  max-height: 420px; overflow: auto; font: 12px/1.4 ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; }
#log { max-height: 60vh; }
/* Fixed tracks for the short facts; the command takes the rest and wraps; the outcome is clipped
   with an ellipsis (its whole text in its title, an error in full under the line). */
#log .entry { display: grid; grid-template-columns: 4.6em 3.6em minmax(4em, 9em) minmax(8em, 1fr) minmax(0, 15em);
  gap: 2px 8px; padding: 2px 0; border-bottom: 1px dotted var(--line); }
#log .entry > span { min-width: 0; }
#log .tool, #log .outcome { overflow: hidden; text-overflow: ellipsis; white-space: nowrap; }
#log .what { white-space: pre-wrap; overflow-wrap: anywhere; max-height: 12em; overflow-y: auto; }
#log .outcome { color: var(--ok); } #log .entry.bad .outcome { color: var(--bad); }
#log .entry.running .outcome { color: var(--warn); }
#log .time, #log .actor { color: var(--muted); }
#log .more { grid-column: 1 / -1; min-width: 0; margin: 0 0 2px 4.6em; }
#log .more summary { cursor: pointer; color: var(--muted); }
#log .more pre { margin: 2px 0; padding: 4px 6px; border-left: 2px solid var(--line); max-height: 320px; overflow: auto;
  white-space: pre-wrap; overflow-wrap: anywhere; font: inherit; }
#log .more pre.error { color: var(--bad); }
pre.box { white-space: pre; } pre.box span { display: block; }
.add { background: var(--add); } .del { background: var(--del); } .hunk { background: var(--hunk); color: var(--muted); }
.file { font-weight: 600; }
#tasks ul { list-style: none; margin: 0; padding-left: 16px; } #tasks > ul { padding-left: 0; }
#tasks li { overflow-wrap: anywhere; }
#tasks .done { color: var(--muted); text-decoration: line-through; } #tasks .current { font-weight: 600; }
.empty { color: var(--muted); font-style: italic; }
`;

function pageHead(title: string): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>${title}</title>
<link rel="stylesheet" href="/live/app.css">
</head>`;
}

/** The page: empty frames the script fills, and how to sign in, shown by the script when it has no pass. */
export function livePage(liveUrl: string, keyFile: string): string {
  return `${pageHead("drydock live")}
<body>
<h1>drydock live</h1>
<div class="sub">Sessions of this server, their audit logs as they are written, diffs, task stacks and model cost. Read-only. <span id="status">connecting…</span></div>
<section id="sign-in" hidden>
${signInText(liveUrl, keyFile, false)}
</section>
<main hidden>
<section>
<h2>Sessions</h2>
<div class="table-wrap">
<table id="sessions"><thead><tr><th class="id">id</th><th class="repo">repository</th><th class="age">age</th><th class="state">state</th><th class="calls">calls</th><th class="cost">cost</th></tr></thead><tbody></tbody></table>
</div>
<p id="no-sessions" class="empty" hidden>No sessions yet: they appear here when a client calls session_create.</p>
</section>
<section id="detail" hidden>
<h2 id="detail-title"></h2>
<div class="facts" id="facts"></div>
<h2>Log</h2>
<div id="log" class="box" aria-live="polite"></div>
<h2>Task stack</h2>
<div id="tasks" class="box"></div>
<h2>Diff</h2>
<pre id="diff" class="box"></pre>
</section>
</main>
<noscript>The live view needs JavaScript. The same facts: drydock sessions list, drydock sessions show ID, drydock sessions log ID --follow.</noscript>
<script src="/live/app.js"></script>
</body>
</html>
`;
}

/** The page a browser gets without the live key: how to open the live view. */
export function signInPage(liveUrl: string, keyFile: string, wrongKey: boolean): string {
  return `${pageHead("drydock live: sign in")}
<body>
<h1>drydock live</h1>
${signInText(liveUrl, keyFile, wrongKey)}
</body>
</html>
`;
}

function signInText(liveUrl: string, keyFile: string, wrongKey: boolean): string {
  const url = escapeHtml(liveUrl);
  const file = escapeHtml(keyFile);
  return `<p>${wrongKey ? "That is not this server's live key. " : ""}This page needs the server's live key, once per tab:
open <code>${url}?token=KEY</code> with the key from ${file} (readable by you only), e.g. <code>xdg-open "${url}?token=$(cat ${file})"</code>.
The live key is not the MCP bearer token: MCP clients never get it, and their token does not open this page.
The page trades the key for a pass to this server only (it lasts 12 hours, or until the tab closes), keeps it in the tab and sends it with each request it makes; the key leaves the address bar, and no cookie is set.</p>`;
}

export function escapeHtml(text: string): string {
  return text
    .replace(/&/g, "&amp;")
    .replace(/</g, "&lt;")
    .replace(/>/g, "&gt;")
    .replace(/"/g, "&quot;")
    .replace(/'/g, "&#39;");
}
