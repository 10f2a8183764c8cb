// The script of report.html (src/eval/html-report.ts), run by the browser that opens the report.
// It reads the results embedded in the page, fills the summary, draws the table (sortable by any
// column, filterable), and opens a task's diff, agent log, test output and result on a click.
// Data goes in with textContent only, never as HTML. The report is one self-contained file: this
// script is read by src/eval/html-report-script.ts and inlined in a script element, so it must
// never hold that element's end tag. Checked by eslint with the browser's globals (eslint.config.js).
"use strict";
const data = JSON.parse(document.getElementById("eval-data").textContent);
const results = data.results;
const texts = data.texts;
const $ = (sel) => document.querySelector(sel);
function el(tag, props, children) {
  const node = document.createElement(tag);
  if (props) for (const [k, v] of Object.entries(props)) {
    if (k === "text") node.textContent = v;
    else if (k === "class") node.className = v;
    else if (k.startsWith("on")) node.addEventListener(k.slice(2), v);
    else node.setAttribute(k, v);
  }
  for (const c of children || []) if (c) node.append(c);
  return node;
}
function duration(ms) {
  if (ms === undefined || ms === null) return "–";
  const s = ms / 1000;
  if (s < 60) return s.toFixed(1) + " s";
  const m = Math.floor(s / 60);
  if (m < 60) return m + " min " + Math.round(s - m * 60) + " s";
  return Math.floor(m / 60) + " h " + (m % 60) + " min";
}
const num = (n) => Number(n || 0).toLocaleString("en-US");
const usd = (n) => (n ? "$" + Number(n).toFixed(n >= 1 ? 2 : 4) : "$0");
const pct = (r) => (r * 100).toFixed(1) + "%";

function card(label, value, sub) {
  return el("div", { class: "card" }, [
    el("div", { class: "label", text: label }),
    el("div", { class: "value", text: value }),
    sub ? el("div", { class: "sub", text: sub }) : null,
  ]);
}

function renderSummary() {
  const s = results.summary;
  const run = results.run;
  $("#title").textContent = "drydock eval — " + run.agent + (run.agent_version ? " " + run.agent_version : "") +
    (run.model ? " (" + run.model + ")" : "");
  $("#meta").textContent =
    "run " + (run.run_id || "?") + " · " + run.tasks_file + " · started " + run.started_at + (run.interrupted ? " · interrupted" : "") +
    " · " + run.attempts + " attempt(s) per task · concurrency " + run.concurrency;
  const statuses = Object.entries(s.statuses).filter(([, n]) => n > 0).map(([k, n]) => k + " " + n).join(", ");
  const cards = $("#summary");
  cards.append(
    card("resolved", pct(s.resolved_rate), s.resolved + " of " + s.tasks + " tasks"),
    card("tasks", String(s.tasks), statuses || "no task"),
    card("time", duration(s.wall_ms ?? s.duration_ms), "box time " + duration(s.duration_ms)),
    card("tokens", num(s.tokens.input + s.tokens.output), num(s.tokens.input) + " in · " + num(s.tokens.output) + " out"),
    card("cost", usd(s.cost_usd), num(s.llm_requests) + " model calls"),
  );
  const images = run.environment_images || [];
  if (images.length) {
    const buildMs = images.reduce((sum, i) => sum + i.build_ms, 0);
    cards.append(card("environments", images.length + " image" + (images.length > 1 ? "s" : ""),
      buildMs ? "built in " + duration(buildMs) + " (not in task time)" : "none built in this run"));
  }
  if (s.integrity_flagged) cards.append(card("flagged", String(s.integrity_flagged), "by the integrity checks" + (run.integrity === "lenient" ? " (lenient: still counted)" : " (not resolved)")));
  if (run.attempts > 1) {
    // Unbiased estimates (1 - C(n-c,k)/C(n,k) per task); older results files have only pass_at_1.
    const at = s.pass_at_k || { 1: { value: s.pass_at_1, tasks: s.tasks } };
    cards.append(card("pass@1", pct(at[1].value), s.resolved_attempts + " of " + s.attempts_finished + " attempts"));
    const k = String(run.attempts);
    if (at[k]) cards.append(card("pass@" + k, pct(at[k].value), "over " + at[k].tasks + " tasks with " + k + " attempts"));
  }
  if (results.invalid_tasks.length) {
    const list = el("ul", { class: "invalid" });
    for (const p of results.invalid_tasks) {
      list.append(el("li", { text: p.source + (p.line ? ":" + p.line : "") + ": " + p.field + ": " + p.message }));
    }
    $("#problems").append(el("h2", { text: "problems in the task file (those tasks did not run)" }), list);
  }
}

const columns = [
  { key: "id", label: "task", value: (t) => t.id },
  { key: "status", label: "status", value: (t) => t.status },
  { key: "attempts", label: "attempts", value: (t) => t.resolved_attempts * 1000 + t.attempts_finished, show: (t) => t.resolved_attempts + "/" + t.attempts_finished },
  { key: "time", label: "time", value: (t) => t.duration_ms, show: (t) => duration(t.duration_ms) },
  { key: "tokens", label: "tokens", value: (t) => t.tokens.input + t.tokens.output, show: (t) => num(t.tokens.input + t.tokens.output) },
  { key: "cost", label: "cost", value: (t) => t.cost_usd, show: (t) => usd(t.cost_usd) },
  { key: "diff", label: "diff", value: (t) => last(t) ? last(t).diff_stat.insertions + last(t).diff_stat.deletions : -1,
    show: (t) => last(t) ? "+" + last(t).diff_stat.insertions + " −" + last(t).diff_stat.deletions : "–" },
  { key: "why", label: "detail", value: (t) => why(last(t)), show: (t) => why(last(t)) },
];
const last = (t) => t.attempts[t.attempts.length - 1];
function why(a) {
  if (!a) return "";
  const flagged = a.integrity && a.integrity.reason ? "flagged: " + a.integrity.reason : "";
  const grade = a.tests && a.tests.grade ? a.tests.grade.reason : "";
  // An attempt with nothing else to say (an empty patch, say) shows what its agent said.
  return a.error || [flagged, grade].filter(Boolean).join("; ") || (a.agent_result && a.agent_result.message) || "";
}
// The reason of the attempt that was flagged, for the badge's tooltip.
const flaggedReason = (t) => (t.attempts.find((a) => a.integrity && a.integrity.reason) || {}).integrity?.reason || "";

let sortKey = "id";
let sortDir = 1;
let open = null;

function sortedTasks() {
  const col = columns.find((c) => c.key === sortKey);
  const filter = $("#filter").value.trim().toLowerCase();
  return results.tasks
    .filter((t) => !filter || (t.id + " " + t.status + (t.integrity_flags ? " flagged" : "") + " " + why(last(t))).toLowerCase().includes(filter))
    .sort((a, b) => {
      const x = col.value(a), y = col.value(b);
      return (x < y ? -1 : x > y ? 1 : a.id < b.id ? -1 : 1) * sortDir;
    });
}

function renderHead() {
  const row = $("#head");
  row.replaceChildren();
  for (const c of columns) {
    const th = el("th", { "data-key": c.key, tabindex: "0", role: "button", title: "sort by " + c.label,
      "aria-sort": c.key === sortKey ? (sortDir > 0 ? "ascending" : "descending") : "none",
      onclick: () => { if (sortKey === c.key) sortDir = -sortDir; else { sortKey = c.key; sortDir = 1; } render(); },
      onkeydown: (e) => { if (e.key === "Enter") e.target.click(); } },
      [c.label + (c.key === sortKey ? (sortDir > 0 ? " ▲" : " ▼") : "")]);
    row.append(th);
  }
}

function details(task) {
  const box = el("div", { class: "details" });
  let attempt = task.attempts.length ? task.attempts[task.attempts.length - 1].attempt : 1;
  let tab = "diff";
  const tabs = el("div", { class: "tabs" });
  const body = el("pre", { class: "body" });
  const files = el("div", { class: "sub" });
  function show() {
    const a = task.attempts.find((x) => x.attempt === attempt);
    const folder = "tasks/" + task.id + (attempt > 1 ? "/attempt-" + attempt : "") + "/";
    files.replaceChildren("files: ", el("a", { href: folder, text: folder }));
    if (a && a.environment_image) {
      files.append(el("span", { class: "environment", text: " · image " + a.environment_image +
        (a.environment_build_ms ? " (built in " + duration(a.environment_build_ms) + ", not in the task's time)" : "") }));
    }
    const t = texts[task.id + "#" + attempt] || { diff: "", agentLog: "", testOutput: "" };
    tabs.replaceChildren();
    if (task.attempts.length > 1) {
      for (const x of task.attempts) {
        tabs.append(el("button", { class: x.attempt === attempt ? "on" : "", text: "attempt " + x.attempt + " · " + x.status,
          onclick: () => { attempt = x.attempt; show(); } }));
      }
      tabs.append(el("span", { class: "gap" }));
    }
    for (const [key, label] of [["diff", "diff"], ["log", "agent log"], ["tests", "test output"], ["result", "result.json"]]) {
      tabs.append(el("button", { class: key === tab ? "on" : "", "data-tab": key, text: label, onclick: () => { tab = key; show(); } }));
    }
    body.replaceChildren();
    body.className = "body " + tab;
    if (tab === "diff") {
      if (!t.diff) body.textContent = "(no change)";
      else for (const line of t.diff.replace(/\n$/, "").split("\n")) {
        const cls = line.startsWith("+++") || line.startsWith("---") ? "file" : line.startsWith("+") ? "add"
          : line.startsWith("-") ? "del" : line.startsWith("@@") ? "hunk" : line.startsWith("diff ") ? "file" : "";
        body.append(el("span", { class: cls, text: line + "\n" }));
      }
    } else if (tab === "log") body.textContent = t.agentLog || "(empty)";
    else if (tab === "tests") body.textContent = t.testOutput || "(the tests did not run)";
    else body.textContent = JSON.stringify(a, null, 2);
  }
  show();
  box.append(tabs, body, task.attempts.length ? files : "");
  return box;
}

function render() {
  renderHead();
  const rows = $("#rows");
  rows.replaceChildren();
  const list = sortedTasks();
  $("#count").textContent = list.length + " of " + results.tasks.length + " tasks";
  for (const t of list) {
    const tr = el("tr", { class: "task " + t.status, "data-id": t.id, tabindex: "0",
      onclick: () => { open = open === t.id ? null : t.id; render(); },
      onkeydown: (e) => { if (e.key === "Enter") e.currentTarget.click(); } });
    for (const c of columns) {
      const text = c.show ? c.show(t) : String(c.value(t));
      const badges = [el("span", { class: "badge " + t.status, text })];
      if (t.integrity_flags) {
        badges.push(" ", el("span", { class: "badge flagged", title: flaggedReason(t), "data-flags": t.integrity_flags.join(","), text: "flagged" }));
      }
      tr.append(c.key === "status" ? el("td", {}, badges) : el("td", { text }));
    }
    rows.append(tr);
    if (open === t.id) rows.append(el("tr", { class: "open" }, [el("td", { colspan: String(columns.length) }, [details(t)])]));
  }
}

renderSummary();
$("#filter").addEventListener("input", render);
render();
document.body.setAttribute("data-ready", "true");
