/**
 * The live page's HTML, as text. The page holds no data and no credential: its script
 * (page/live-app.js) signs in and fetches the data from the same origin, and puts every text in
 * with textContent; its style is page/live-app.css. The policy allows this origin's script, style
 * and connections only: no inline script or style, nothing from elsewhere.
 */

export const LIVE_CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

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
<div id="task-panel" hidden>
<h2>Task stack</h2>
<div id="tasks" class="box"></div>
</div>
<h2>Diff</h2>
<pre id="diff" class="box"></pre>
</section>
</main>
<noscript>The live view needs JavaScript. The same facts: drydock sessions list, drydock sessions show ID, drydock sessions log ID --follow.</noscript>
<script type="module" src="/live/app.js"></script>
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
