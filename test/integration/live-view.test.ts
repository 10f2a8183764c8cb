import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { request } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
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

const CHROMIUM = process.env.DRYDOCK_CHROMIUM ?? "/usr/bin/chromium";
const VIEWPORT = { width: 1280, height: 900 };

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
      args: [
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--no-first-run",
      ],
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

  it("lets in only the live key's holder, answers only GET, and its cookie does not open /mcp", async () => {
    const signIn = await fetch(`${base}/`);
    expect(signIn.status).toBe(401);
    expect(await signIn.text()).toContain("?token=");
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

    const exchanged = await fetch(`${base}/?token=${liveKey}`, { redirect: "manual" });
    expect(exchanged.status).toBe(303);
    expect(exchanged.headers.get("location")).toBe("/");
    const cookie = exchanged.headers.get("set-cookie")!;
    expect(cookie).toMatch(
      new RegExp(
        `^drydock_live_${new URL(base).port}=[^;]+; Path=/; HttpOnly; SameSite=Strict; Max-Age=43200$`,
      ),
    );
    expect(cookie).not.toContain(liveKey);
    const jar = { cookie: cookie.split(";")[0]! };
    expect((await fetch(`${base}/live/api/sessions`, { headers: jar })).status).toBe(200);
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
    const cookies = await context.cookies(base);
    expect(cookies).toEqual([
      expect.objectContaining({
        name: `drydock_live_${new URL(base).port}`,
        httpOnly: true,
        sameSite: "Strict",
      }),
    ]);
    await page.waitForSelector(`tr.session[data-id="${sessionId}"].on`);
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
});
