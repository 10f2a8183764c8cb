import { execFile } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { request } from "node:http";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";
import { promisify } from "node:util";
import { inflateSync } from "node:zlib";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { chromium, type BrowserContext, type Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Engine } from "../../src/engine/engine.js";
import { LABEL_SESSION } from "../../src/engine/labels.js";
import { gatewayEntry } from "../../src/session/audit-entry.js";
import { appendAuditEntry } from "../../src/session/audit-log.js";
import { spawnHttpServer, stopServer, type SpawnedHttpServer } from "../helpers/http-server.js";
import { tempRepo, type TempRepo } from "../helpers/repos.js";

// The page's globals, used inside page.evaluate callbacks (tests compile without the DOM library).
// eslint-disable-next-line @typescript-eslint/no-explicit-any
declare const document: any;
// eslint-disable-next-line @typescript-eslint/no-explicit-any
declare const getComputedStyle: (element: unknown) => any;
declare const sessionStorage: Record<string, string>;

const CHROMIUM = process.env.DRYDOCK_CHROMIUM ?? "/usr/bin/chromium";
const cli = join(process.cwd(), "dist", "cli", "main.js");
/** Widths a person keeps the page open at, from a small laptop to a large screen. */
const WIDTHS = [1024, 1280, 1440, 1920, 2560];
const VIEWPORT = { width: 1280, height: 900 };
/** Where the screenshots are kept for a person to look at after the run (DRYDOCK_TEST_ARTIFACTS). */
const ARTIFACTS = join(
  process.env.DRYDOCK_TEST_ARTIFACTS ?? join(tmpdir(), "drydock-test-artifacts"),
  "live-view",
);
mkdirSync(ARTIFACTS, { recursive: true });
const artifact = (name: string) => join(ARTIFACTS, name);

const CHROMIUM_ARGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
  "--no-first-run",
];

/** Width, height and how many different byte values the pixel data holds (a blank image: a few). */
function pngFacts(png: Buffer): { width: number; height: number; distinctBytes: number } {
  expect(png.subarray(0, 8)).toEqual(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]));
  const idat: Buffer[] = [];
  let width = 0;
  let height = 0;
  for (let at = 8; at < png.length;) {
    const length = png.readUInt32BE(at);
    const type = png.toString("latin1", at + 4, at + 8);
    const data = png.subarray(at + 8, at + 8 + length);
    if (type === "IHDR") {
      width = data.readUInt32BE(0);
      height = data.readUInt32BE(4);
    }
    if (type === "IDAT") idat.push(data);
    at += 12 + length;
  }
  const pixels = inflateSync(Buffer.concat(idat));
  return { width, height, distinctBytes: new Set(pixels).size };
}

describe("the live view of drydock serve --http", () => {
  let repo: TempRepo;
  let state: string;
  let profile: string;
  let server: SpawnedHttpServer;
  let base: string;
  let client: Client;
  let context: BrowserContext;
  let page: Page;
  let sessionId: string;
  /** The live view's own key, from the file the server wrote; the MCP token does not open it. */
  let liveKey: string;
  const token = "live-token-" + Math.random().toString(36).slice(2);
  const problems: string[] = [];
  const requests: string[] = [];

  const call = async (name: string, args: Record<string, unknown>) => {
    const reply = (await client.callTool({ name, arguments: args })) as {
      content: Array<{ text: string }>;
      structuredContent: Record<string, unknown>;
      isError?: boolean;
    };
    expect(reply.isError, reply.content[0]?.text).toBeFalsy();
    return reply.structuredContent;
  };
  const bash = (command: string) => call("bash", { command, session_id: sessionId });
  /** The log's lines of one command: its text, whether it runs, what shows under it, and a mark a test left on it. */
  const linesOf = (command: string) =>
    page.$$eval(
      "#log .entry[data-tool=bash]",
      (els, c) =>
        els
          .filter((e) => e.querySelector(".what")?.textContent === c)
          .map((e) => ({
            running: e.classList.contains("running"),
            outcome: e.querySelector(".outcome")?.textContent ?? "",
            live: e.querySelector(".live-tail")?.textContent ?? null,
            mark: (e as unknown as { dataset: Record<string, string> }).dataset.mark ?? null,
          })),
      command,
    );

  beforeAll(async () => {
    if (!existsSync(CHROMIUM)) {
      throw new Error(
        `Chromium is not installed at ${CHROMIUM}; the live view test needs it. Fix: run \`bash scripts/install-chromium.sh\`, or set DRYDOCK_CHROMIUM to a Chromium binary.`,
      );
    }
    repo = tempRepo({ "README.md": "hello\n" });
    state = mkdtempSync(join(tmpdir(), "drydock-state-"));
    server = await spawnHttpServer({
      repo: repo.path,
      env: { ...process.env, DRYDOCK_STATE_DIR: state, DRYDOCK_TOKEN: token },
      args: ["--pool", "0"],
    });
    base = server.url.replace(/\/mcp$/, "");
    liveKey = readFileSync(join(state, "live-key"), "utf8").trim();
    client = new Client({ name: "live-view-test", version: "1" });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(server.url), {
        requestInit: { headers: { Authorization: `Bearer ${token}` } },
      }),
    );
    sessionId = (await call("session_create", {})).session_id as string;
    profile = mkdtempSync(join(tmpdir(), "drydock-chromium-"));
    context = await chromium.launchPersistentContext(profile, {
      executablePath: CHROMIUM,
      headless: true,
      viewport: VIEWPORT,
      args: CHROMIUM_ARGS,
    });
    page = await context.newPage();
    page.on("pageerror", (e) => problems.push(e.message));
    page.on("console", (m) => void (m.type() === "error" && problems.push(m.text())));
    page.on("request", (r) => requests.push(r.url()));
  }, 120_000);

  afterAll(async () => {
    await context?.close();
    if (profile) rmSync(profile, { recursive: true, force: true });
    await client?.close().catch(() => undefined);
    await stopServer(server?.child);
    repo?.[Symbol.dispose]();
    if (state) rmSync(state, { recursive: true, force: true });
    if (sessionId) {
      const engine = await Engine.connect();
      expect(await engine.listBoxes(LABEL_SESSION, sessionId)).toEqual([]);
    }
  });

  /** A request with a Host header fetch would not let us set. */
  const rawGet = (path: string, headers: Record<string, string>) =>
    new Promise<number>((resolve, reject) => {
      const url = new URL(base);
      request({ host: url.hostname, port: url.port, path, headers }, (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      })
        .on("error", reject)
        .end();
    });

  it("lets in only the live key's holder, answers only GET, and its pass does not open /mcp", async () => {
    // The page itself holds nothing secret: how to sign in, and frames its script fills.
    const signIn = await fetch(`${base}/`);
    expect(signIn.status).toBe(200);
    const html = await signIn.text();
    expect(html).toContain("?token=");
    expect(html).not.toContain(liveKey);
    expect(signIn.headers.get("set-cookie")).toBeNull();
    expect((await fetch(`${base}/?token=wrong`, { redirect: "manual" })).status).toBe(401);
    expect((await fetch(`${base}/live/api/sessions`)).status).toBe(401);
    expect(
      (await fetch(`${base}/live/api/sessions`, { headers: { authorization: "Bearer wrong" } })).status,
    ).toBe(401);
    expect(
      (await fetch(`${base}/live/api/sessions`, { headers: { cookie: "drydock_live=forged" } })).status,
    ).toBe(401);

    expect(
      (await fetch(`${base}/live/api/sessions`, { headers: { authorization: `Bearer ${token}` } })).status,
    ).toBe(401);

    const bearer = { authorization: `Bearer ${liveKey}` };
    const listed = (await (await fetch(`${base}/live/api/sessions`, { headers: bearer })).json()) as {
      sessions: Array<{ id: string; alive: boolean; repo: string }>;
    };
    expect(listed.sessions).toEqual([
      expect.objectContaining({ id: sessionId, alive: true, repo: repo.path }),
    ]);
    for (const method of ["POST", "PUT", "DELETE"]) {
      expect(
        (await fetch(`${base}/live/api/sessions/${sessionId}`, { method, headers: bearer })).status,
      ).toBe(405);
    }
    expect((await fetch(`${base}/live/api/sessions/0123456789ab`, { headers: bearer })).status).toBe(404);
    expect((await fetch(`${base}/live/api/sessions/..%2f..%2fhttp-token`, { headers: bearer })).status).toBe(
      404,
    );

    const opened = await fetch(`${base}/?token=${liveKey}`, { redirect: "manual" });
    expect(opened.status).toBe(200);
    expect(opened.headers.get("set-cookie")).toBeNull();
    expect(await opened.text()).not.toContain(liveKey);
    const traded = await fetch(`${base}/live/api/pass`, { headers: bearer });
    expect(traded.headers.get("set-cookie")).toBeNull();
    const { pass } = (await traded.json()) as { pass: string };
    expect(pass).toMatch(/^\d+\.[A-Za-z0-9_-]{43}$/);
    expect(pass).not.toContain(liveKey);
    const jar = { authorization: `Bearer ${pass}` };
    expect((await fetch(`${base}/live/api/sessions`, { headers: jar })).status).toBe(200);
    // A pass is not traded for another (it would never expire), and a cookie of it opens nothing.
    expect((await fetch(`${base}/live/api/pass`, { headers: jar })).status).toBe(401);
    expect(
      (await fetch(`${base}/live/api/sessions`, { headers: { cookie: `drydock_live=${pass}` } })).status,
    ).toBe(401);
    expect(
      (
        await fetch(server.url, {
          method: "POST",
          headers: {
            ...jar,
            "content-type": "application/json",
            accept: "application/json, text/event-stream",
          },
          body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }),
        })
      ).status,
    ).toBe(401);

    expect(await rawGet("/", { host: "evil.example", ...jar })).toBe(403);
    expect(
      await rawGet("/live/api/sessions", { host: new URL(base).host, origin: "http://evil.example", ...jar }),
    ).toBe(403);
  });

  it("signs in with ?token= and shows a command run through MCP within one second, and the screenshot changes", async () => {
    await page.goto(`${base}/?token=${liveKey}`);
    expect(new URL(page.url()).search).toBe("");
    await page.waitForSelector(`tr.session[data-id="${sessionId}"].on`);
    // Nothing a browser sends by itself: no cookie; the tab keeps a pass, not the key.
    expect(await context.cookies(base)).toEqual([]);
    const kept = await page.evaluate(() => Object.entries(sessionStorage));
    expect(kept).toEqual([["drydock-live-pass", expect.stringMatching(/^\d+\.[A-Za-z0-9_-]{43}$/)]]);
    await page.waitForSelector("body[data-ready=true]");

    await bash("echo first-command");
    let started = Date.now();
    await page.waitForFunction(
      () => document.querySelector("#log")?.textContent?.includes("echo first-command"),
      null,
      {
        timeout: 1000,
        polling: 20,
      },
    );
    expect(Date.now() - started).toBeLessThan(1000);
    const before = await page.screenshot();
    const facts = pngFacts(before);
    expect({ width: facts.width, height: facts.height }).toEqual(VIEWPORT);
    expect(facts.distinctBytes).toBeGreaterThan(16);

    await bash("echo second-command && echo changed >> README.md");
    started = Date.now();
    await page.waitForFunction(
      () => document.querySelector("#log")?.textContent?.includes("second-command"),
      null,
      {
        timeout: 1000,
        polling: 20,
      },
    );
    expect(Date.now() - started).toBeLessThan(1000);
    const after = await page.screenshot();
    expect(pngFacts(after).width).toBe(VIEWPORT.width);
    expect(after.equals(before)).toBe(false);
    const bashRows = await page.$$eval("#log .entry[data-tool=bash] .what", (els) =>
      els.map((e) => e.textContent),
    );
    expect(bashRows).toEqual(["echo first-command", "echo second-command && echo changed >> README.md"]);
  });

  it("shows the diff coloured, the task stack, and the model's tokens and cost", async () => {
    await page.waitForSelector("#diff span.add", { timeout: 20_000 });
    expect(await page.$$eval("#diff span.add", (els) => els.map((e) => e.textContent))).toContain("+changed");
    expect(await page.$$eval("#diff span.file", (els) => els.map((e) => e.textContent))).toContain(
      "diff --git a/README.md b/README.md",
    );
    const colours = await page.$eval("#diff span.add", (e) => getComputedStyle(e).backgroundColor);
    expect(colours).not.toMatch(/^rgba\(0, 0, 0, 0\)$|^transparent$/);

    // The facts and task stack refresh every 2 s; a loaded machine may need a few rounds.
    await call("create_new_task", { title: "Show the live view", body: "all of it", session_id: sessionId });
    await page.waitForFunction(
      () => document.querySelector("#tasks .current")?.textContent?.includes("Show the live view"),
      null,
      { timeout: 20_000 },
    );

    // A model request as the session's gateway logs it.
    appendAuditEntry(
      gatewayEntry(sessionId, {
        provider: "openai",
        path: "/v1/chat/completions",
        model: "gpt-test",
        status: 200,
        source: "live",
        inputTokens: 1234,
        outputTokens: 56,
        costUsd: 0.0789,
        usageEstimated: false,
        durationMs: 900,
      }),
      state,
    );
    // The page shows it without a reload, counted once: its list and its facts read the log at
    // the same moment, and each must add the new entry once.
    await page.waitForFunction(
      () => document.querySelector("#facts")?.textContent?.includes("$0.0789"),
      null,
      {
        timeout: 20_000,
      },
    );
    expect(await page.textContent("#facts")).toContain("1234 / 56");
    // The log's line comes over its own stream, maybe after the facts' refresh.
    await page.waitForFunction(
      () => document.querySelector("#log")?.textContent?.includes("openai gpt-test"),
      null,
      {
        timeout: 20_000,
      },
    );
    await page.waitForFunction(
      (id) => document.querySelector(`tr.session[data-id="${id}"] .cost`)?.textContent === "$0.0789",
      sessionId,
      { timeout: 20_000 },
    );
  });

  it("shows markup the agent wrote as text: it never runs", async () => {
    const attack = `echo '<img src=x onerror="document.title=1"><script>document.title=2</script>'`;
    await bash(attack);
    await page.waitForFunction(
      () => document.querySelector("#log")?.textContent?.includes("<img src=x"),
      null,
      {
        timeout: 1000,
        polling: 20,
      },
    );
    expect(
      await page.$$eval("#log .entry[data-tool=bash] .what", (els) => els.map((e) => e.textContent)),
    ).toContain(attack);
    expect(await page.$$("#log img, #log script")).toEqual([]);
    expect(await page.title()).toBe("drydock live");
  });

  it("shows a command's output folded under its line, with its exit code", async () => {
    const reply = await bash("echo hello-from-box; exit 3");
    expect(reply.exit_code).toBe(3);
    const entry = "#log .entry[data-tool=bash]";
    await page.waitForFunction(
      () =>
        [...document.querySelectorAll("#log .entry[data-tool=bash]")].some(
          (e) => e.textContent.includes("hello-from-box") && e.querySelector("details"),
        ),
      null,
      { timeout: 5000, polling: 50 },
    );
    const shown = await page.$$eval(entry, (els) =>
      els
        .filter((e) => e.querySelector(".what")?.textContent === "echo hello-from-box; exit 3")
        .map((e) => {
          const more = e.querySelector("details")!;
          const pre = more.querySelector("pre.tail") as unknown as { checkVisibility(): boolean };
          const before = pre.checkVisibility();
          (more.querySelector("summary") as unknown as { click(): void }).click();
          return {
            outcome: e.querySelector(".outcome")?.textContent,
            summary: more.querySelector("summary")?.textContent,
            tail: more.querySelector("pre.tail")?.textContent,
            hiddenBefore: !before,
            shownAfter: pre.checkVisibility(),
          };
        }),
    );
    expect(shown).toEqual([
      {
        outcome: expect.stringMatching(/^exit 3/),
        summary: "output, exit 3",
        tail: "hello-from-box\n",
        hiddenBefore: true,
        shownAfter: true,
      },
    ]);
  });

  it("shows what a command printed as text: markup and control characters do nothing", async () => {
    const title = await page.title();
    // printf writes the ESC, BEL and SOH itself; the command's text holds none of them.
    await bash(
      `printf '<img src=x onerror="document.title=3"><script>document.title=4</script>\\033[31mred\\033[0m\\033]0;pwned\\007 bell\\a soh\\001 end\\n'`,
    );
    await page.waitForFunction(
      () => [...document.querySelectorAll("#log pre.tail")].some((p) => p.textContent.includes("bell")),
      null,
      { timeout: 5000, polling: 50 },
    );
    const tails = await page.$$eval("#log pre.tail", (els) => els.map((e) => e.textContent ?? ""));
    const tail = tails.find((t) => t.includes("bell"))!;
    expect(tail).toContain('<img src=x onerror="document.title=3"><script>document.title=4</script>');
    expect(tail).toContain("red");
    expect(tail).not.toContain("[31m");
    // No control character but the newline reaches the page.
    expect(tail).not.toMatch(/[\x00-\x09\x0b-\x1f\x7f]/);
    expect(await page.$$("#log img, #log script, #log .more *:not(summary):not(pre)")).toEqual([]);
    await page.$$eval("#log details", (els) =>
      els.forEach((d) => ((d as unknown as { open: boolean }).open = true)),
    );
    await new Promise((r) => setTimeout(r, 200));
    expect(await page.title()).toBe(title);
    expect(problems).toEqual([]);
  });

  it("updates a running command's line in place, streaming what it prints before it ends", async () => {
    const command = "for i in 1 2 3 4 5 6 7; do echo tick-$i; sleep 0.8; done";
    let ended = false;
    const reply = bash(command).then((r) => {
      ended = true;
      return r;
    });
    // Its line shows while it runs, with what it printed so far: long before its 5.6 s are up.
    await page.waitForFunction(
      (c) =>
        [...document.querySelectorAll("#log .entry.running")].some(
          (e) =>
            e.querySelector(".what")?.textContent === c &&
            e.querySelector(".live-tail")?.textContent.includes("tick-1"),
        ),
      command,
      { timeout: 3000, polling: 50 },
    );
    expect(ended).toBe(false);
    // A mark on the element: the same one must carry the rest of the output and then the end.
    await page.$$eval(
      "#log .entry.running",
      (els, c) =>
        els
          .filter((e) => e.querySelector(".what")?.textContent === c)
          .forEach((e) => ((e as unknown as { dataset: Record<string, string> }).dataset.mark = "first")),
      command,
    );
    await page.waitForFunction(
      (c) =>
        [...document.querySelectorAll("#log .entry.running")].some(
          (e) =>
            e.querySelector(".what")?.textContent === c &&
            e.dataset.mark === "first" &&
            e.querySelector(".live-tail")?.textContent.includes("tick-4"),
        ),
      command,
      { timeout: 5000, polling: 50 },
    );
    expect(ended).toBe(false);
    expect(await linesOf(command)).toEqual([
      {
        running: true,
        outcome: expect.stringMatching(/^running…/),
        live: expect.stringMatching(/^tick-1\ntick-2\ntick-3\ntick-4\n/),
        mark: "first",
      },
    ]);
    await page.screenshot({ path: artifact("running-1280.png") });
    expect((await reply).exit_code).toBe(0);
    await page.waitForFunction(
      (c) =>
        [...document.querySelectorAll("#log .entry[data-tool=bash]")].some(
          (e) => e.querySelector(".what")?.textContent === c && !e.classList.contains("running"),
        ),
      command,
      { timeout: 5000, polling: 50 },
    );
    // One line for the call, the same element, now saying how it ended; nothing left "running…".
    expect(await linesOf(command)).toEqual([
      { running: false, outcome: expect.stringMatching(/^exit 0/), live: null, mark: "first" },
    ]);
    expect(await page.$$("#log .entry.running")).toEqual([]);
    await page.screenshot({ path: artifact("ended-in-place-1280.png") });
    expect(problems).toEqual([]);
  });

  it("shows a long command that ended on one line to a page opened afterwards: its log's running line is replaced", async () => {
    // Over 2 s: the log gets a "running" line for it, then its last line.
    const command = "sleep 2.5; echo slept";
    await bash(command);
    const log = readFileSync(join(state, "audit", `${sessionId}.jsonl`), "utf8");
    const logged = log
      .split("\n")
      .filter((l) => l.includes('"sleep 2.5; echo slept"'))
      .map((l) => (JSON.parse(l) as { outcome: { running?: boolean } }).outcome.running === true);
    expect(logged).toEqual([true, false]);
    await page.reload();
    await page.waitForFunction(
      (c) =>
        [...document.querySelectorAll("#log .entry[data-tool=bash]:not(.running) .what")].some(
          (e) => e.textContent === c,
        ),
      command,
      { timeout: 5000, polling: 50 },
    );
    expect(await linesOf(command)).toEqual([
      { running: false, outcome: expect.stringMatching(/^exit 0/), live: null, mark: null },
    ]);
    expect(await page.$$("#log .entry.running")).toEqual([]);
  });

  it("shows what a running command prints as text, at most its last 4 KiB, and stays responsive under a flood", async () => {
    const title = await page.title();
    // The page's main thread is watched: a timer every 50 ms notes how late it ran.
    await page.evaluate(() => {
      const g = globalThis as unknown as { lateMs: number; watch: unknown };
      let last = performance.now();
      g.lateMs = 0;
      g.watch = setInterval(() => {
        const now = performance.now();
        g.lateMs = Math.max(g.lateMs, now - last - 50);
        last = now;
      }, 50);
    });
    // Markup, colours, a terminal title, a bell; a 300 kB line; then 300,000 lines at full speed.
    const command =
      `printf '<img src=x onerror="document.title=5"><script>document.title=6</script>\\033[32mgreen\\033[0m\\033]0;pwned\\007 bell\\a soh\\001 end\\n'; ` +
      `head -c 300000 /dev/zero | tr '\\0' x; echo; echo huge-done; sleep 2; seq 1 300000; echo flood-done; sleep 3`;
    const reply = bash(command);
    const liveTail = () =>
      page.$$eval(
        "#log .entry.running",
        (els, c) => {
          const row = els.find((e) => e.querySelector(".what")?.textContent === c);
          return row
            ? {
                tail: row.querySelector(".live-tail")?.textContent ?? "",
                elements: row.querySelectorAll(".live *:not(span)").length,
              }
            : null;
        },
        command,
      );
    const waitFor = (text: string) =>
      page.waitForFunction(
        ([c, t]) =>
          [...document.querySelectorAll("#log .entry.running")].some(
            (e) =>
              e.querySelector(".what")?.textContent === c &&
              e.querySelector(".live-tail")?.textContent.includes(t),
          ),
        [command, text],
        { timeout: 30_000, polling: 100 },
      );

    await waitFor("huge-done");
    const huge = (await liveTail())!;
    expect(huge.tail).toContain('<img src=x onerror="document.title=5"><script>document.title=6</script>');
    expect(huge.tail).toContain("green");
    expect(huge.tail).not.toContain("[32m");
    expect(huge.tail).not.toMatch(/[\x00-\x09\x0b-\x1f\x7f]/);
    // The huge line is shown cut, not whole: at most 500 of its 300,000 characters.
    const xs = Math.max(...huge.tail.split("\n").map((l: string) => (/^x+$/.test(l) ? l.length : 0)));
    expect(xs).toBeGreaterThan(100);
    expect(xs).toBeLessThanOrEqual(500);
    expect(huge.elements).toBe(0);
    await page.screenshot({ path: artifact("running-markup-1280.png") });

    await waitFor("flood-done");
    const flood = (await liveTail())!;
    expect(Buffer.byteLength(flood.tail)).toBeLessThanOrEqual(4096);
    expect(flood.tail).toMatch(/\n300000\nflood-done\n$/);
    expect(flood.tail).not.toContain("huge-done");
    expect(await page.$$("#log img, #log script")).toEqual([]);
    await page.screenshot({ path: artifact("running-flood-1280.png") });
    await reply;
    const lateMs = await page.evaluate(() => {
      const g = globalThis as unknown as { lateMs: number; watch: number };
      clearInterval(g.watch);
      return g.lateMs;
    });
    // A page that drew every line, or all 2 MB, would stall for seconds.
    expect(lateMs).toBeLessThan(1000);
    expect(await page.title()).toBe(title);
    expect(problems).toEqual([]);
  });

  it("keeps its layout from 1024 to 2560 px: no overlap, no sideways scroll, no squeezed column", async () => {
    // A long error and a long unbroken command, as an agent's calls may leave them.
    const error =
      "ENOENT: no such file or directory, open '/workspace/" +
      "deeply/nested/".repeat(40) +
      "file.txt' " +
      "x".repeat(900) +
      " and then some words ".repeat(30);
    expect(error.length).toBeGreaterThan(2000);
    appendAuditEntry(
      {
        ts: new Date().toISOString(),
        session: sessionId,
        actor: "agent",
        tool: "str_replace_based_edit_tool",
        args: { command: "view", path: "/workspace/" + "deeply/nested/".repeat(40) + "file.txt" },
        outcome: { ok: false, error },
        duration_ms: 12,
        output_bytes: null,
      },
      state,
    );
    await bash("echo " + "y".repeat(700));
    await page.waitForFunction(
      () =>
        document.querySelector("#log")?.textContent?.includes("yyyyyyyyyy") &&
        document.querySelector("#log")?.textContent?.includes("and then some words"),
      null,
      { timeout: 5000, polling: 50 },
    );
    const fitted: unknown[] = [];
    for (const width of WIDTHS) {
      await page.setViewportSize({ width, height: 900 });
      await page.evaluate(
        () =>
          new Promise((r) =>
            (globalThis as unknown as { requestAnimationFrame(f: () => void): void }).requestAnimationFrame(
              () => r(null),
            ),
          ),
      );
      const png = await page.screenshot({ path: artifact(`layout-${width}.png`), fullPage: true });
      expect(pngFacts(png).width).toBe(width);
      const facts = await page.evaluate(() => {
        type Rect = {
          left: number;
          right: number;
          top: number;
          bottom: number;
          width: number;
          height: number;
        };
        const box = (e: unknown): Rect => (e as { getBoundingClientRect(): Rect }).getBoundingClientRect();
        const meets = (a: Rect, b: Rect) =>
          a.left < b.right - 0.5 &&
          b.left < a.right - 0.5 &&
          a.top < b.bottom - 0.5 &&
          b.top < a.bottom - 0.5;
        // What of an element shows: its box cut by every ancestor that scrolls or clips (the log
        // scrolled down has entries above its top that nobody sees).
        const shown = (e: { parentElement: unknown }): Rect => {
          const b = box(e);
          const r = { left: b.left, right: b.right, top: b.top, bottom: b.bottom };
          for (
            let a = e.parentElement as { parentElement: unknown } | null;
            a;
            a = a.parentElement as never
          ) {
            if (getComputedStyle(a).overflow === "visible") continue;
            const c = box(a);
            r.left = Math.max(r.left, c.left);
            r.right = Math.min(r.right, c.right);
            r.top = Math.max(r.top, c.top);
            r.bottom = Math.min(r.bottom, c.bottom);
          }
          return { ...r, width: r.right - r.left, height: r.bottom - r.top };
        };
        const cells = [...document.querySelectorAll("#sessions th, #sessions td")].map(shown);
        const detail = [document.querySelector("#detail"), ...document.querySelectorAll("#detail *")]
          .map(shown)
          .filter((r) => r.width > 0 && r.height > 0);
        const overlaps = detail.filter((d) => cells.some((c) => meets(c, d))).length;
        const cellOverflow = [...document.querySelectorAll("#sessions td")].filter((td) => {
          const r = box(td);
          const table = box(document.querySelector("#sessions"));
          return r.right > table.right + 0.5;
        }).length;
        const columns = [...document.querySelectorAll("#log .entry")].map((e) => ({
          what: box(e.querySelector(".what")).width,
          outcome: box(e.querySelector(".outcome")).width,
          tool: box(e.querySelector(".tool")).width,
        }));
        // Where a cell's text ends, drawn or not: a span that does not clip may run into the next.
        const textRight = (e: unknown) => {
          const range = document.createRange();
          range.selectNodeContents(e);
          return (range.getBoundingClientRect() as Rect).right;
        };
        const runInto = [...document.querySelectorAll("#log .entry")].flatMap((e) => {
          const cells = [".time", ".actor", ".tool"].map((c) => e.querySelector(c));
          return cells.slice(0, 2).flatMap((cell, i) => {
            const next = box(cells[i + 1]);
            const cut = cell.scrollWidth > cell.clientWidth + 0.5;
            return textRight(cell) > next.left + 0.5 || cut ? [`${cell.className} ${cell.textContent}`] : [];
          });
        });
        const repo = document.querySelector("#sessions td.repo");
        const cutCells = [...document.querySelectorAll("#sessions th, #sessions td")]
          .filter((c) => c.scrollWidth > c.clientWidth + 0.5)
          .map((c) => c.textContent);
        const scroller = document.scrollingElement;
        return {
          runInto: [...new Set(runInto)],
          cutCells,
          repo: {
            text: repo.textContent,
            title: repo.title,
            cut: repo.scrollWidth > repo.clientWidth + 0.5,
          },
          scrollWidth: scroller.scrollWidth,
          clientWidth: scroller.clientWidth,
          overlaps,
          cellOverflow,
          narrowest: {
            what: Math.min(...columns.map((c) => c.what)),
            outcome: Math.min(...columns.map((c) => c.outcome)),
            tool: Math.min(...columns.map((c) => c.tool)),
          },
          cells: cells.length,
        };
      });
      expect(facts.cells, `${width} px`).toBeGreaterThan(6);
      expect(facts.scrollWidth, `${width} px`).toBeLessThanOrEqual(facts.clientWidth);
      expect(facts.overlaps, `${width} px`).toBe(0);
      expect(facts.cellOverflow, `${width} px`).toBe(0);
      expect(facts.narrowest.what, `${width} px`).toBeGreaterThan(80);
      expect(facts.narrowest.outcome, `${width} px`).toBeGreaterThan(80);
      expect(facts.narrowest.tool, `${width} px`).toBeGreaterThan(40);
      // The actor ("drydock" the longest) and the time stay whole in their own columns; no cell of
      // the table is cut (id, state, calls, cost and their headings whole); the repository shows
      // whole, or its last folders behind "…/", never cut, its whole path in the title.
      fitted.push({ width, runInto: facts.runInto, cutCells: facts.cutCells, repo: facts.repo });
    }
    // At every width: the actor ("drydock" the longest) and the time stay whole in their own
    // columns; no cell of the table is cut (id, state, calls, cost and their headings whole); the
    // repository shows whole, or its last folders behind "…/", never cut, its whole path in the title.
    expect(fitted).toEqual(
      WIDTHS.map((width) => ({
        width,
        runInto: [],
        cutCells: [],
        repo: {
          text: expect.stringMatching(new RegExp(`(^|/)${basename(repo.path)}$`)),
          title: repo.path,
          cut: false,
        },
      })),
    );
    await page.setViewportSize(VIEWPORT);
  });

  it("says when the session has ended, and every request stayed on the server's origin", async () => {
    await call("session_destroy", { session_id: sessionId });
    await page.waitForFunction(
      () => document.querySelector("#status")?.textContent?.includes("ended"),
      null,
      {
        timeout: 20_000,
      },
    );
    await page.waitForFunction(
      (id) => document.querySelector(`tr.session[data-id="${id}"] .badge`)?.textContent === "ended",
      sessionId,
      { timeout: 20_000 },
    );
    expect(problems).toEqual([]);
    expect(requests.length).toBeGreaterThan(3);
    for (const url of requests) expect(new URL(url).origin).toBe(base);
  });

  it("still shows the session's diff after it ended, kept beside its log (0600), and sessions diff prints it", async () => {
    await page.waitForFunction(
      () => document.querySelector("#diff .note")?.textContent?.includes("kept when it ended"),
      null,
      { timeout: 20_000 },
    );
    expect(await page.$$eval("#diff span.add", (els) => els.map((e) => e.textContent))).toContain("+changed");
    const kept = join(state, "audit", `${sessionId}.diff`);
    expect(statSync(kept).mode & 0o777).toBe(0o600);
    expect(readFileSync(kept, "utf8")).toContain("+changed");
    const api = (await (
      await fetch(`${base}/live/api/sessions/${sessionId}/diff`, {
        headers: { authorization: `Bearer ${liveKey}` },
      })
    ).json()) as { available: boolean; saved?: boolean; diff?: string };
    expect(api).toMatchObject({ available: true, saved: true });
    expect(api.diff).toContain("+changed");
    const { stdout, stderr } = await promisify(execFile)(
      process.execPath,
      [cli, "sessions", "diff", sessionId],
      {
        env: { ...process.env, DRYDOCK_STATE_DIR: state },
      },
    );
    expect(stdout).toBe(readFileSync(kept, "utf8"));
    expect(stderr).toContain("kept when it ended");
    await page.screenshot({ path: artifact("ended-1280.png"), fullPage: true });
    expect(problems).toEqual([]);
  });
});

describe("the live view of a server without the task tools", () => {
  let repo: TempRepo;
  let state: string;
  let profile: string;
  let server: SpawnedHttpServer;
  let client: Client;
  let context: BrowserContext;
  let sessionId = "";

  beforeAll(async () => {
    repo = tempRepo({ "README.md": "hello\n" });
    state = mkdtempSync(join(tmpdir(), "drydock-state-"));
    const token = "live-core-" + Math.random().toString(36).slice(2);
    server = await spawnHttpServer({
      repo: repo.path,
      env: { ...process.env, DRYDOCK_STATE_DIR: state, DRYDOCK_TOKEN: token },
      args: ["--pool", "0", "--tools", "core"],
    });
    client = new Client({ name: "live-view-core-test", version: "1" });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(server.url), {
        requestInit: { headers: { Authorization: `Bearer ${token}` } },
      }),
    );
    const created = (await client.callTool({ name: "session_create", arguments: {} })) as unknown as {
      structuredContent: { session_id: string };
    };
    sessionId = created.structuredContent.session_id;
    profile = mkdtempSync(join(tmpdir(), "drydock-chromium-"));
    context = await chromium.launchPersistentContext(profile, {
      executablePath: CHROMIUM,
      headless: true,
      viewport: { width: 1440, height: 900 },
      args: CHROMIUM_ARGS,
    });
  }, 120_000);

  afterAll(async () => {
    await context?.close();
    if (profile) rmSync(profile, { recursive: true, force: true });
    await client?.close().catch(() => undefined);
    await stopServer(server?.child);
    repo?.[Symbol.dispose]();
    if (state) rmSync(state, { recursive: true, force: true });
  });

  it("shows no task stack panel: the server has no task tools, the session no stack", async () => {
    const tools = (await client.listTools()).tools.map((t) => t.name);
    expect(tools).not.toContain("create_new_task");
    const page = await context.newPage();
    const base = server.url.replace(/\/mcp$/, "");
    const liveKey = readFileSync(join(state, "live-key"), "utf8").trim();
    await page.goto(`${base}/?token=${liveKey}`);
    await page.waitForSelector(`tr.session[data-id="${sessionId}"].on`);
    // The facts come with the answer that says whether the server has task tools.
    await page.waitForFunction(() => document.querySelector("#facts")?.textContent?.includes("calls"), null, {
      timeout: 20_000,
    });
    await page.screenshot({ path: artifact("no-task-tools-1440.png"), fullPage: true });
    const panel = await page.evaluate(() => {
      const tasks = document.querySelector("#tasks");
      const heading = [...document.querySelectorAll("#detail h2")].find(
        (h) => h.textContent === "Task stack",
      );
      return {
        tasksShown: tasks ? tasks.checkVisibility() : false,
        headingShown: heading ? heading.checkVisibility() : false,
        diffShown: document.querySelector("#diff").checkVisibility(),
      };
    });
    expect(panel).toEqual({ tasksShown: false, headingShown: false, diffShown: true });
    await page.close();
  });
});
