// @ts-check
/**
 * The live page's script, a browser module (served at /live/app.js; the page has no inline script).
 * It signs in (the key from `?token=`, taken out of the address bar at once, traded for a pass this
 * tab keeps in sessionStorage and sends as a bearer header: nothing a browser would send by
 * itself), lists the sessions (again every two seconds), follows the chosen session's audit log as
 * Server-Sent Events read with fetch (EventSource cannot send a header), and keeps its facts, task
 * stack and diff fresh. A call's line is updated in place: while it runs it shows what it has
 * printed so far, then how it ended. Every text from the server goes in with textContent, never as
 * HTML: the agent writes what the log holds.
 *
 * Type-checked against the DOM (tsconfig.json beside it) and linted with browser globals.
 */

/**
 * One audit line as the server sends it (src/server/live/entry-view.ts).
 * @typedef {object} Entry
 * @property {string} call the call it is of: a call's lines share it
 * @property {string} ts
 * @property {string} actor
 * @property {string} tool
 * @property {string} what
 * @property {string} outcome
 * @property {boolean} ok
 * @property {boolean} running
 * @property {number | null} duration_ms
 * @property {number | null} output_bytes
 * @property {number | null} exit_code
 * @property {string | null} error
 * @property {string | null} output_tail
 */

/**
 * @typedef {object} SessionRow
 * @property {string} id
 * @property {string | null} repo
 * @property {string | null} created_at
 * @property {boolean} alive
 * @property {boolean} ended
 * @property {number} calls
 * @property {number} cost_usd
 */

/**
 * @typedef {object} TaskNode
 * @property {string} id
 * @property {string} title
 * @property {string} status
 * @property {boolean} is_current
 * @property {TaskNode[]} sub_tasks
 */

/**
 * @typedef {SessionRow & {
 *   usage: { llm_requests: number, refused: number, input_tokens: number, output_tokens: number, usd: number },
 *   task_tools: boolean,
 *   task_stack: { tree: TaskNode[] } | null,
 *   task_stack_problem?: string,
 * }} SessionDetail
 */

/**
 * @typedef {{ available: true, diff: string, truncated: boolean, saved?: true } | { available: false, why: string }} LiveDiff
 */

/**
 * The element the page's HTML holds under `sel`.
 * @param {string} sel
 * @returns {HTMLElement}
 */
function $(sel) {
  const node = document.querySelector(sel);
  if (!(node instanceof HTMLElement)) throw new Error(`the page has no ${sel}`);
  return node;
}

/**
 * @param {string} tag
 * @param {string | null} [cls]
 * @param {unknown} [text] put in as text, never as HTML
 * @returns {HTMLElement}
 */
function el(tag, cls, text) {
  const node = document.createElement(tag);
  if (cls) node.className = cls;
  if (text !== undefined && text !== null) node.textContent = String(text);
  return node;
}

/** @param {number} usd */
function money(usd) {
  return "$" + (usd || 0).toFixed(4);
}

/** @param {string | null} iso */
function age(iso) {
  if (!iso) return "–";
  const s = Math.max(0, (Date.now() - Date.parse(iso)) / 1000);
  if (s < 60) return Math.floor(s) + " s";
  if (s < 3600) return Math.floor(s / 60) + " min";
  if (s < 86400) return Math.floor(s / 3600) + " h";
  return Math.floor(s / 86400) + " d";
}

/** @param {number | null} ms */
function duration(ms) {
  if (ms === null || ms === undefined) return "";
  return ms < 1000 ? ms + " ms" : (ms / 1000).toFixed(1) + " s";
}

/** @param {number} n */
function bytes(n) {
  return n < 1024
    ? n + " B"
    : n < 1048576
      ? (n / 1024).toFixed(1) + " KiB"
      : (n / 1048576).toFixed(1) + " MiB";
}

/**
 * A repository path in a narrow cell: whole when it fits, else its last folders that fit behind
 * "…/" (the start of a path says least about which repository it is), its whole text in the
 * cell's title. Measured in place, so the cell must be in the page.
 * @param {HTMLElement} cell
 * @param {string} path
 */
function fitPath(cell, path) {
  cell.title = path;
  cell.textContent = path;
  const parts = path.split("/").filter((p) => p !== "");
  for (let keep = parts.length - 1; keep >= 1 && cell.scrollWidth > cell.clientWidth; keep--) {
    cell.textContent = "…/" + parts.slice(-keep).join("/");
  }
}

/**
 * @param {string} text
 * @param {boolean} [down]
 */
function status(text, down) {
  const s = $("#status");
  s.textContent = text;
  s.className = down ? "down" : "";
}

const PASS_ITEM = "drydock-live-pass";
/** @type {string | null} */
let pass = null;

/**
 * Requests carry the pass as a header and nothing else: no cookie goes with them.
 * @param {string} path
 * @param {RequestInit} [init]
 */
function authorized(path, init) {
  const headers = Object.assign({ authorization: "Bearer " + pass }, (init && init.headers) || {});
  return fetch(path, Object.assign({ cache: "no-store", credentials: "omit" }, init || {}, { headers }));
}

/** The key from ?token=, out of the address bar before anything else, traded for this tab's pass. */
async function signIn() {
  const key = new URLSearchParams(location.search).get("token");
  if (key !== null) {
    history.replaceState(null, "", location.pathname + location.hash);
    const res = await fetch("/live/api/pass", {
      headers: { authorization: "Bearer " + key },
      cache: "no-store",
      credentials: "omit",
    });
    if (res.ok) sessionStorage.setItem(PASS_ITEM, (await res.json()).pass);
  }
  pass = sessionStorage.getItem(PASS_ITEM);
  return pass !== null;
}

/** @param {string} why */
function showSignIn(why) {
  sessionStorage.removeItem(PASS_ITEM);
  pass = null;
  if (stream) stream.abort();
  $("main").hidden = true;
  $("#sign-in").hidden = false;
  status(why, true);
  document.body.dataset.ready = "true";
}

/**
 * @param {string} path
 * @returns {Promise<any>}
 */
async function getJson(path) {
  const res = await authorized(path);
  if (res.status === 401) {
    showSignIn("signed out (the server restarted, or the pass is past its 12 hours)");
    throw new Error("signed out");
  }
  if (!res.ok) throw new Error(path + " answered " + res.status);
  return res.json();
}

/** @type {string | null} */
let selected = null;
/** @type {AbortController | null} */
let stream = null;
let live = false;
/** @type {ReturnType<typeof setTimeout> | undefined} */
let diffTimer;
let diffBusy = false;
/** @type {SessionRow[]} */
let rows = [];

/**
 * Each call's line in the log, by its call key: a later line of the same call (its end) takes the
 * place of a running one instead of being added below it.
 * @typedef {object} LogLine
 * @property {HTMLElement} row
 * @property {boolean} ended
 * @property {Entry | null} printed the last `running` event with output, kept for the log's own "running" line
 */
/** @type {Map<string, LogLine>} */
let lines = new Map();

/** @param {SessionRow} row */
function stateOf(row) {
  return row.alive ? "alive" : row.ended ? "ended" : "gone";
}

function renderList() {
  const body = $("#sessions tbody");
  body.replaceChildren();
  for (const row of rows) {
    const tr = el("tr", "session" + (row.id === selected ? " on" : ""));
    tr.dataset.id = row.id;
    const repo = el("td", "repo", "–");
    tr.append(el("td", "id", row.id), repo, el("td", "age", age(row.created_at)));
    const state = el("td", "state");
    state.append(el("span", "badge " + stateOf(row), stateOf(row)));
    tr.append(state, el("td", "calls", row.calls), el("td", "cost", money(row.cost_usd)));
    // Cells cut with an ellipsis keep their whole text in their title.
    for (const td of tr.children)
      if (td instanceof HTMLElement && td.className !== "state") td.title = td.textContent ?? "";
    tr.addEventListener("click", () => select(row.id));
    body.append(tr);
    if (row.repo) fitPath(repo, row.repo);
  }
  $("#no-sessions").hidden = rows.length > 0;
}

async function refreshList() {
  if (!pass) return;
  try {
    rows = (await getJson("/live/api/sessions")).sessions;
    renderList();
    const wanted = location.hash.slice(1);
    const first = rows[0];
    if (!selected && first) select(rows.some((r) => r.id === wanted) ? wanted : first.id);
    if (live) status("live");
  } catch (e) {
    status("the server does not answer: " + (e instanceof Error ? e.message : String(e)), true);
  }
  document.body.dataset.ready = "true";
}

/**
 * @param {string} label
 * @param {unknown} value
 */
function card(label, value) {
  const c = el("div", "card");
  c.append(el("div", "label", label), el("div", "value", value));
  return c;
}

/**
 * The stack, or the panel hidden on a server without the task tools when the session has none.
 * @param {SessionDetail} d
 */
function renderTasks(d) {
  const panel = $("#task-panel");
  const box = $("#tasks");
  const stack = d.task_stack;
  panel.hidden = !d.task_tools && !stack && !d.task_stack_problem;
  box.replaceChildren();
  if (d.task_stack_problem) box.append(el("div", "empty", "warning: " + d.task_stack_problem));
  if (!stack) {
    box.append(el("div", "empty", "no task stack"));
    return;
  }
  if (stack.tree.length === 0) {
    box.append(el("div", "empty", "(no tasks: zen state)"));
    return;
  }
  /** @param {TaskNode[]} nodes */
  const list = (nodes) => {
    const ul = el("ul");
    for (const n of nodes) {
      const li = el("li", "task " + n.status + (n.is_current ? " current" : ""));
      li.append(
        el(
          "span",
          "title",
          "[" + n.id + "] " + n.title + " (" + n.status + ")" + (n.is_current ? "  ← here" : ""),
        ),
      );
      if (n.sub_tasks.length) li.append(list(n.sub_tasks));
      ul.append(li);
    }
    return ul;
  };
  box.append(list(stack.tree));
}

async function refreshDetail() {
  if (!selected || !pass) return;
  const id = selected;
  try {
    /** @type {SessionDetail} */
    const d = await getJson("/live/api/sessions/" + id);
    if (id !== selected) return;
    $("#detail-title").textContent = "session " + d.id;
    const u = d.usage;
    $("#facts").replaceChildren(
      card("state", stateOf(d)),
      card("repository", d.repo || "–"),
      card("age", age(d.created_at)),
      card("calls", d.calls),
      card("model requests", u.llm_requests + (u.refused ? " (+" + u.refused + " refused)" : "")),
      card("tokens in / out", u.input_tokens + " / " + u.output_tokens),
      card("cost", money(u.usd)),
    );
    renderTasks(d);
  } catch (e) {
    status(e instanceof Error ? e.message : String(e), true);
  }
}

/** @param {string} text */
function renderDiff(text) {
  const pre = $("#diff");
  pre.replaceChildren();
  if (!text) {
    pre.append(el("span", "empty", "no changes"));
    return;
  }
  for (const line of text.replace(/\n$/, "").split("\n")) {
    let cls = "";
    if (line.startsWith("diff --git") || line.startsWith("+++ ") || line.startsWith("--- ")) cls = "file";
    else if (line.startsWith("@@")) cls = "hunk";
    else if (line.startsWith("+")) cls = "add";
    else if (line.startsWith("-")) cls = "del";
    pre.append(el("span", cls, line || " "));
  }
}

async function refreshDiff() {
  if (!selected || !pass) return;
  if (diffBusy) {
    diffSoon();
    return;
  }
  diffBusy = true;
  const id = selected;
  try {
    /** @type {LiveDiff} */
    const d = await getJson("/live/api/sessions/" + id + "/diff");
    if (id !== selected) return;
    if (!d.available) {
      $("#diff").replaceChildren(el("span", "empty", d.why));
      return;
    }
    renderDiff(d.diff);
    if (d.saved)
      $("#diff").prepend(
        el("span", "empty note", "the session has ended: its last diff, kept when it ended"),
      );
    if (d.truncated) $("#diff").append(el("span", "empty", "… (cut here: the diff is longer)"));
  } catch (e) {
    $("#diff").replaceChildren(
      el("span", "empty", "the diff could not be taken: " + (e instanceof Error ? e.message : String(e))),
    );
  } finally {
    diffBusy = false;
  }
}

function diffSoon() {
  clearTimeout(diffTimer);
  diffTimer = setTimeout(refreshDiff, 400);
}

/**
 * How much of the output the tail is, e.g. "last 4.0 KiB of 1.2 MiB".
 * @param {Entry} e
 * @param {string} tail
 */
function tailSize(e, tail) {
  const kept = new TextEncoder().encode(tail).length;
  return e.output_bytes !== null && e.output_bytes > kept
    ? "last " + bytes(kept) + " of " + bytes(e.output_bytes)
    : "";
}

/**
 * What an ended call printed and its error in full, folded under its line: text, never markup.
 * @param {Entry} e
 */
function entryMore(e) {
  if (!e.output_tail && !(e.error && e.error.length > 0)) return null;
  const more = el("details", "more");
  const bits = [];
  if (e.output_tail) {
    const size = tailSize(e, e.output_tail);
    bits.push(size ? "output (" + size + ")" : "output");
  }
  if (e.exit_code !== null) bits.push("exit " + e.exit_code);
  if (e.error) bits.push("error in full");
  more.append(el("summary", null, bits.join(", ")));
  if (e.error) more.append(el("pre", "error", e.error));
  if (e.output_tail) more.append(el("pre", "tail", e.output_tail));
  return more;
}

/**
 * What a running call has printed so far, open under its line and kept scrolled to its end.
 * @param {Entry} e
 */
function entryLive(e) {
  const live = el("pre", "live");
  if (!e.output_tail) {
    live.append(el("span", "live-note", "(nothing printed yet)"));
    return live;
  }
  const size = tailSize(e, e.output_tail);
  if (size) live.append(el("span", "live-note", "… (" + size + " so far)\n"));
  live.append(el("span", "live-tail", e.output_tail));
  return live;
}

/**
 * Fills a call's line: what it was and how it ended, or, while it runs, what it printed so far.
 * @param {HTMLElement} row
 * @param {Entry} e
 */
function fillRow(row, e) {
  row.className = "entry" + (e.running ? " running" : e.ok ? " ok" : " bad");
  row.dataset.tool = e.tool;
  const time = el("span", "time", e.ts.slice(11, 19));
  time.title = e.ts;
  const actor = el("span", "actor", e.actor);
  actor.title = e.actor;
  const tool = el("span", "tool", e.tool);
  tool.title = e.tool;
  const outcomeText = e.outcome + (e.duration_ms !== null ? "  " + duration(e.duration_ms) : "");
  const outcome = el("span", "outcome", outcomeText);
  outcome.title = outcomeText;
  row.replaceChildren(time, actor, tool, el("span", "what", e.what), outcome);
  if (e.running) {
    row.append(entryLive(e));
    const shown = row.querySelector(".live");
    if (shown) shown.scrollTop = shown.scrollHeight;
  } else {
    const more = entryMore(e);
    if (more) row.append(more);
  }
}

/**
 * A line of the log, or a call's line so far: added at the end for a new call, filled in place
 * for one already shown that has not ended. A running call's line from the log itself (it carries
 * no output) keeps the output already shown.
 * @param {Entry} e
 * @param {boolean} fromLog false for the server's `running` events, which are not in the log
 */
function showEntry(e, fromLog) {
  const log = $("#log");
  const atBottom = log.scrollTop + log.clientHeight >= log.scrollHeight - 4;
  const known = lines.get(e.call);
  // A call that has ended keeps its last line; an event about it that comes later changes nothing.
  if (known && known.ended && !fromLog) return;
  let line = known && !known.ended ? known : undefined;
  if (!line) {
    if (lines.size === 0) log.replaceChildren();
    line = { row: el("div", "entry"), ended: false, printed: null };
    lines.set(e.call, line);
    log.append(line.row);
  }
  if (e.running && !fromLog) line.printed = e;
  const shown = e.running && fromLog && line.printed ? Object.assign({}, e, pick(line.printed)) : e;
  line.ended = !e.running;
  fillRow(line.row, shown);
  document.body.dataset.entries = String(lines.size);
  if (atBottom) log.scrollTop = log.scrollHeight;
}

/**
 * The output part of a running call's event.
 * @param {Entry} e
 */
function pick(e) {
  return { output_tail: e.output_tail, output_bytes: e.output_bytes };
}

/**
 * One Server-Sent Event's fields from its lines.
 * @param {string} block
 */
function parseEvent(block) {
  /** @type {{ event: string, data: string, id: string | undefined }} */
  const event = { event: "message", data: "", id: undefined };
  for (const line of block.split("\n")) {
    const colon = line.indexOf(":");
    if (colon === 0) continue;
    const field = colon < 0 ? line : line.slice(0, colon);
    const value = colon < 0 ? "" : line.slice(colon + 1).replace(/^ /, "");
    if (field === "event") event.event = value;
    else if (field === "data") event.data += (event.data ? "\n" : "") + value;
    else if (field === "id") event.id = value;
  }
  return event;
}

/** @param {Entry} e */
function onEntry(e) {
  showEntry(e, true);
  if (!e.running && e.actor !== "drydock") {
    diffSoon();
    refreshDetail();
  }
}

function onEnd() {
  live = false;
  status("session ended; its log is complete");
  refreshDetail();
  refreshDiff();
}

/**
 * The session's log as it is written, again from the last event after a dropped connection.
 * @param {string} id
 */
function follow(id) {
  if (stream) stream.abort();
  const control = new AbortController();
  stream = control;
  live = false;
  lines = new Map();
  $("#log").replaceChildren(el("div", "empty", "nothing logged yet"));
  /** @type {string | null} */
  let lastId = null;
  const run = async () => {
    while (!control.signal.aborted && pass) {
      try {
        /** @type {Record<string, string>} */
        const headers = lastId === null ? {} : { "last-event-id": lastId };
        const res = await authorized("/live/api/sessions/" + id + "/events", {
          headers,
          signal: control.signal,
        });
        if (res.status === 401) {
          showSignIn("signed out (the server restarted, or the pass is past its 12 hours)");
          return;
        }
        if (!res.ok || !res.body) throw new Error("the log answered " + res.status);
        live = true;
        status("live");
        const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
        let buffer = "";
        for (;;) {
          const { value, done } = await reader.read();
          if (done) break;
          buffer += value.replace(/\r\n?/g, "\n");
          let cut;
          while ((cut = buffer.indexOf("\n\n")) >= 0) {
            const event = parseEvent(buffer.slice(0, cut));
            buffer = buffer.slice(cut + 2);
            if (event.id !== undefined) lastId = event.id;
            if (event.event === "entry") onEntry(JSON.parse(event.data));
            else if (event.event === "running") showEntry(JSON.parse(event.data), false);
            else if (event.event === "end") {
              control.abort();
              onEnd();
              return;
            }
          }
        }
      } catch {
        if (control.signal.aborted) return;
      }
      live = false;
      status("reconnecting…", true);
      await new Promise((resolve) => setTimeout(resolve, 1000));
    }
  };
  run();
}

/** @param {string} id */
function select(id) {
  if (id === selected) return;
  selected = id;
  history.replaceState(null, "", "#" + id);
  $("#detail").hidden = false;
  $("#detail-title").textContent = "session " + id;
  $("#facts").replaceChildren();
  $("#tasks").replaceChildren();
  $("#task-panel").hidden = true;
  $("#diff").replaceChildren();
  renderList();
  follow(id);
  refreshDetail();
  refreshDiff();
}

signIn().then(
  (signedIn) => {
    if (!signedIn) {
      showSignIn("not signed in");
      return;
    }
    $("main").hidden = false;
    refreshList();
    // A repository's path is fitted to its cell's width: again when the width changes.
    addEventListener("resize", renderList);
    setInterval(refreshList, 2000);
    setInterval(refreshDetail, 2000);
  },
  (e) => {
    status(
      "the server does not answer: " + (e instanceof Error ? e.message : String(e)) + "; reload the page",
      true,
    );
  },
);
