/**
 * The live page's script, as text. It signs in (the key from `?token=`, taken out of the address
 * bar at once, traded for a pass this tab keeps in sessionStorage and sends as a bearer header:
 * nothing a browser would send by itself), lists the sessions (again every two seconds), follows
 * the chosen session's audit log as Server-Sent Events read with fetch (EventSource cannot send a
 * header), and keeps its facts, task stack and diff fresh. Every text from the server goes in with
 * textContent, never as HTML: the agent writes what the log holds.
 */
export const LIVE_SCRIPT = String.raw`
"use strict";
const $ = (sel) => document.querySelector(sel);
function el(tag, cls, text) {
  const node = document.createElement(tag);
  if (cls) node.className = cls;
  if (text !== undefined && text !== null) node.textContent = String(text);
  return node;
}
function money(usd) { return "$" + (usd || 0).toFixed(4); }
function age(iso) {
  if (!iso) return "–";
  const s = Math.max(0, (Date.now() - Date.parse(iso)) / 1000);
  if (s < 60) return Math.floor(s) + " s";
  if (s < 3600) return Math.floor(s / 60) + " min";
  if (s < 86400) return Math.floor(s / 3600) + " h";
  return Math.floor(s / 86400) + " d";
}
function duration(ms) {
  if (ms === null || ms === undefined) return "";
  return ms < 1000 ? ms + " ms" : (ms / 1000).toFixed(1) + " s";
}
function status(text, down) {
  const s = $("#status");
  s.textContent = text;
  s.className = down ? "down" : "";
}
const PASS_ITEM = "drydock-live-pass";
let pass = null;

/** Requests carry the pass as a header and nothing else: no cookie goes with them. */
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

function showSignIn(why) {
  sessionStorage.removeItem(PASS_ITEM);
  pass = null;
  if (stream) stream.abort();
  $("main").hidden = true;
  $("#sign-in").hidden = false;
  status(why, true);
  document.body.dataset.ready = "true";
}

async function getJson(path) {
  const res = await authorized(path);
  if (res.status === 401) { showSignIn("signed out (the server restarted, or the pass is past its 12 hours)"); throw new Error("signed out"); }
  if (!res.ok) throw new Error(path + " answered " + res.status);
  return res.json();
}

let selected = null;
let stream = null;
let live = false;
let entries = 0;
let diffTimer = null;
let diffBusy = false;
let rows = [];

function stateOf(row) { return row.alive ? "alive" : row.ended ? "ended" : "gone"; }

function renderList() {
  const body = $("#sessions tbody");
  body.replaceChildren();
  for (const row of rows) {
    const tr = el("tr", "session" + (row.id === selected ? " on" : ""));
    tr.dataset.id = row.id;
    tr.append(el("td", "id", row.id), el("td", "repo", row.repo || "–"), el("td", "age", age(row.created_at)));
    const state = el("td", "state");
    state.append(el("span", "badge " + stateOf(row), stateOf(row)));
    tr.append(state, el("td", "calls", row.calls), el("td", "cost", money(row.cost_usd)));
    // Cells cut with an ellipsis keep their whole text in their title.
    for (const td of tr.children) if (td.className !== "state") td.title = td.textContent;
    tr.addEventListener("click", () => select(row.id));
    body.append(tr);
  }
  $("#no-sessions").hidden = rows.length > 0;
}

async function refreshList() {
  if (!pass) return;
  try {
    rows = (await getJson("/live/api/sessions")).sessions;
    renderList();
    const wanted = location.hash.slice(1);
    if (!selected && rows.length) select(rows.some((r) => r.id === wanted) ? wanted : rows[0].id);
    if (live) status("live");
  } catch (e) {
    status("the server does not answer: " + e.message, true);
  }
  document.body.dataset.ready = "true";
}

function card(label, value) {
  const c = el("div", "card");
  c.append(el("div", "label", label), el("div", "value", value));
  return c;
}

function renderTasks(stack, problem) {
  const box = $("#tasks");
  box.replaceChildren();
  if (problem) box.append(el("div", "empty", "warning: " + problem));
  if (!stack) { box.append(el("div", "empty", "no task stack")); return; }
  if (stack.tree.length === 0) { box.append(el("div", "empty", "(no tasks: zen state)")); return; }
  const list = (nodes) => {
    const ul = el("ul");
    for (const n of nodes) {
      const li = el("li", "task " + n.status + (n.is_current ? " current" : ""));
      li.append(el("span", "title", "[" + n.id + "] " + n.title + " (" + n.status + ")" + (n.is_current ? "  ← here" : "")));
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
    renderTasks(d.task_stack, d.task_stack_problem);
  } catch (e) {
    status(e.message, true);
  }
}

function renderDiff(text) {
  const pre = $("#diff");
  pre.replaceChildren();
  if (!text) { pre.append(el("span", "empty", "no changes")); return; }
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
  if (diffBusy) { diffSoon(); return; }
  diffBusy = true;
  const id = selected;
  try {
    const d = await getJson("/live/api/sessions/" + id + "/diff");
    if (id !== selected) return;
    if (!d.available) { $("#diff").replaceChildren(el("span", "empty", d.why)); return; }
    renderDiff(d.diff);
    if (d.saved) $("#diff").prepend(el("span", "empty note", "the session has ended: its last diff, kept when it ended"));
    if (d.truncated) $("#diff").append(el("span", "empty", "… (cut here: the diff is longer)"));
  } catch (e) {
    $("#diff").replaceChildren(el("span", "empty", "the diff could not be taken: " + e.message));
  } finally {
    diffBusy = false;
  }
}

function diffSoon() {
  clearTimeout(diffTimer);
  diffTimer = setTimeout(refreshDiff, 400);
}

function bytes(n) {
  return n < 1024 ? n + " B" : n < 1048576 ? (n / 1024).toFixed(1) + " KiB" : (n / 1048576).toFixed(1) + " MiB";
}

/** What the call printed and its error in full, folded under its line: text, never markup. */
function entryMore(e) {
  if (!e.output_tail && !(e.error && e.error.length > 0)) return null;
  const more = el("details", "more");
  const bits = [];
  if (e.output_tail) {
    const kept = new TextEncoder().encode(e.output_tail).length;
    bits.push(e.output_bytes !== null && e.output_bytes > kept ? "output (last " + bytes(kept) + " of " + bytes(e.output_bytes) + ")" : "output");
  }
  if (e.exit_code !== null) bits.push("exit " + e.exit_code);
  if (e.error) bits.push("error in full");
  more.append(el("summary", null, bits.join(", ")));
  if (e.error) more.append(el("pre", "error", e.error));
  if (e.output_tail) more.append(el("pre", "tail", e.output_tail));
  return more;
}

function addEntry(e) {
  const log = $("#log");
  const atBottom = log.scrollTop + log.clientHeight >= log.scrollHeight - 4;
  const row = el("div", "entry" + (e.running ? " running" : e.ok ? " ok" : " bad"));
  row.dataset.tool = e.tool;
  const time = el("span", "time", e.ts.slice(11, 19));
  time.title = e.ts;
  const tool = el("span", "tool", e.tool);
  tool.title = e.tool;
  const outcomeText = e.outcome + (e.duration_ms !== null ? "  " + duration(e.duration_ms) : "");
  const outcome = el("span", "outcome", outcomeText);
  outcome.title = outcomeText;
  row.append(time, el("span", "actor", e.actor), tool, el("span", "what", e.what), outcome);
  const more = entryMore(e);
  if (more) row.append(more);
  if (entries === 0) log.replaceChildren();
  log.append(row);
  entries++;
  document.body.dataset.entries = String(entries);
  if (atBottom) log.scrollTop = log.scrollHeight;
}

/** One Server-Sent Event's fields from its lines. */
function parseEvent(block) {
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

function onEntry(e) {
  addEntry(e);
  if (!e.running && e.actor !== "drydock") { diffSoon(); refreshDetail(); }
}

function onEnd() {
  live = false;
  status("session ended; its log is complete");
  refreshDetail();
  refreshDiff();
}

/** The session's log as it is written, again from the last event after a dropped connection. */
function follow(id) {
  if (stream) stream.abort();
  const control = new AbortController();
  stream = control;
  live = false;
  entries = 0;
  $("#log").replaceChildren(el("div", "empty", "nothing logged yet"));
  let lastId = null;
  const run = async () => {
    while (!control.signal.aborted && pass) {
      try {
        const headers = lastId === null ? {} : { "last-event-id": lastId };
        const res = await authorized("/live/api/sessions/" + id + "/events", { headers, signal: control.signal });
        if (res.status === 401) { showSignIn("signed out (the server restarted, or the pass is past its 12 hours)"); return; }
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
            else if (event.event === "end") { control.abort(); onEnd(); return; }
          }
        }
      } catch (e) {
        if (control.signal.aborted) return;
      }
      live = false;
      status("reconnecting…", true);
      await new Promise((resolve) => setTimeout(resolve, 1000));
    }
  };
  run();
}

function select(id) {
  if (id === selected) return;
  selected = id;
  history.replaceState(null, "", "#" + id);
  $("#detail").hidden = false;
  $("#detail-title").textContent = "session " + id;
  $("#facts").replaceChildren();
  $("#tasks").replaceChildren();
  $("#diff").replaceChildren();
  renderList();
  follow(id);
  refreshDetail();
  refreshDiff();
}

signIn().then(
  (signedIn) => {
    if (!signedIn) { showSignIn("not signed in"); return; }
    $("main").hidden = false;
    refreshList();
    setInterval(refreshList, 2000);
    setInterval(refreshDetail, 2000);
  },
  (e) => { status("the server does not answer: " + e.message + "; reload the page", true); },
);
`;
