/**
 * The live view shows every client's sessions, so it has a credential of its own: the live key,
 * written for the person who runs the server, which no MCP client receives. The MCP bearer token,
 * which every HTTP client holds, opens neither the page nor its API; one client cannot reach
 * another's sessions by any route. Nothing the page holds is sent by a browser on its own: no
 * cookie (browsers send a host's cookies to every port of it), only a pass in the tab's
 * sessionStorage sent as a header; a real browser signed in to one server sends nothing that opens
 * it, or another server on another port, from another tab; the pass is this server's (port in its
 * MAC) and expires on the server's clock.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { chromium } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Engine } from "../../src/engine/engine.js";
import { LABEL_SESSION } from "../../src/engine/labels.js";
import { LIVE_PASS_MAX_AGE_S, livePass } from "../../src/server/live/live-auth.js";
import { failure, ok } from "../helpers/mcp-client.js";
import { spawnHttpServer, stopServer, type SpawnedHttpServer } from "../helpers/http-server.js";
import { tempRepo, type TempRepo } from "../helpers/repos.js";

// The page's storage, read inside page.evaluate (tests compile without the DOM library).
declare const sessionStorage: Record<string, string>;

const CHROMIUM = process.env.DRYDOCK_CHROMIUM ?? "/usr/bin/chromium";

/** Everything a client received over HTTP: status lines' headers and bodies. */
type Received = string[];

async function connect(url: string, token: string, received?: Received): Promise<Client> {
  const client = new Client({ name: "live-access", version: "1" });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(url), {
      requestInit: { headers: { Authorization: `Bearer ${token}` } },
      fetch: async (input, init) => {
        const res = await fetch(input, init);
        if (received) {
          received.push(JSON.stringify([...res.headers.entries()]));
          received.push(await res.clone().text());
        }
        return res;
      },
    }),
  );
  return client;
}

describe("the live view's credential, apart from the MCP token", () => {
  let repo: TempRepo;
  const states: string[] = [];
  const servers: SpawnedHttpServer[] = [];
  const clients: Client[] = [];
  const sessions: string[] = [];
  const token = `t-${Math.random().toString(36).slice(2)}`;
  let server: SpawnedHttpServer;
  let base: string;
  let port: number;
  let liveKey: string;
  let a: Client;
  let b: Client;
  let aSession: string;
  const received: Received = [];

  async function serve(): Promise<{ server: SpawnedHttpServer; liveKey: string; state: string }> {
    const state = mkdtempSync(join(tmpdir(), "drydock-state-"));
    states.push(state);
    const spawned = await spawnHttpServer({
      repo: repo.path,
      env: { ...process.env, DRYDOCK_STATE_DIR: state, DRYDOCK_TOKEN: token },
      args: ["--pool", "0"],
    });
    servers.push(spawned);
    return { server: spawned, liveKey: readFileSync(join(state, "live-key"), "utf8").trim(), state };
  }

  beforeAll(async () => {
    repo = tempRepo({ "README.md": "hello\n" });
    ({ server, liveKey } = await serve());
    base = server.url.replace(/\/mcp$/, "");
    port = Number(new URL(base).port);
    a = await connect(server.url, token, received);
    b = await connect(server.url, token, received);
    clients.push(a, b);
    aSession = ok(await a.callTool({ name: "session_create", arguments: {} })).session_id as string;
    sessions.push(aSession);
    ok(
      await a.callTool({
        name: "bash",
        arguments: { session_id: aSession, command: "echo secret >> README.md" },
      }),
    );
    ok(
      await a.callTool({
        name: "create_new_task",
        arguments: { session_id: aSession, title: "a's plan", body: "a's notes" },
      }),
    );
  }, 120_000);

  afterAll(async () => {
    for (const client of clients) await client.close().catch(() => undefined);
    for (const spawned of servers) await stopServer(spawned.child);
    repo?.[Symbol.dispose]();
    for (const state of states) rmSync(state, { recursive: true, force: true });
    const engine = await Engine.connect();
    for (const id of sessions) expect(await engine.listBoxes(LABEL_SESSION, id)).toEqual([]);
  });

  /** The page's data routes; the page at / holds no data and is answered to anyone. */
  const liveRoutes = () => [
    "/live/api/sessions",
    `/live/api/sessions/${aSession}`,
    `/live/api/sessions/${aSession}/diff`,
    `/live/api/sessions/${aSession}/events`,
  ];

  it("the MCP bearer token opens neither the page nor any of its API routes; the live key does", async () => {
    for (const path of liveRoutes()) {
      const res = await fetch(`${base}${path}`, { headers: { authorization: `Bearer ${token}` } });
      expect(res.status, path).toBe(401);
      expect(await res.text(), path).not.toContain(aSession);
    }
    const page = await fetch(`${base}/`, { headers: { authorization: `Bearer ${token}` } });
    expect(await page.text()).not.toContain(aSession);
    // Signing in with the MCP token is refused, and sets nothing.
    const exchanged = await fetch(`${base}/?token=${token}`, { redirect: "manual" });
    expect(exchanged.status).toBe(401);
    expect(exchanged.headers.get("set-cookie")).toBeNull();

    const listed = await fetch(`${base}/live/api/sessions`, {
      headers: { authorization: `Bearer ${liveKey}` },
    });
    expect(listed.status).toBe(200);
    expect(JSON.stringify(await listed.json())).toContain(aSession);
    const diff = await fetch(`${base}/live/api/sessions/${aSession}/diff`, {
      headers: { authorization: `Bearer ${liveKey}` },
    });
    expect(JSON.stringify(await diff.json())).toContain("+secret");
    // And the live key is no MCP credential.
    const mcp = await fetch(server.url, {
      method: "POST",
      headers: {
        authorization: `Bearer ${liveKey}`,
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
      },
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: 1,
        method: "initialize",
        params: { protocolVersion: "2025-03-26", capabilities: {}, clientInfo: { name: "x", version: "1" } },
      }),
    });
    expect(mcp.status).toBe(401);
  });

  it("client B reaches none of client A's sessions, by MCP tool or by the live view", async () => {
    const unknown = "0123456789ab";
    const asUnknown = (message: string) => message.replaceAll(aSession, unknown);
    const listed = ok(await b.callTool({ name: "session_list", arguments: {} }));
    expect(JSON.stringify(listed)).not.toContain(aSession);
    for (const [name, args] of [
      ["bash", { command: "cat README.md" }],
      ["session_diff", {}],
      ["session_destroy", {}],
    ] as const) {
      const theirs = failure(await b.callTool({ name, arguments: { ...args, session_id: aSession } }));
      const none = failure(await b.callTool({ name, arguments: { ...args, session_id: unknown } }));
      expect(asUnknown(theirs), name).toBe(none);
    }
    // A name no session holds is a task stack of its own; a session's stack is its client's only.
    for (const name of ["get_current_task", "get_big_picture"]) {
      const theirs = failure(await b.callTool({ name, arguments: { session_id: aSession } }));
      expect(theirs, name).toMatch(new RegExp(`session ${aSession} not found`));
      expect(theirs, name).not.toContain("a's plan");
    }
    for (const path of liveRoutes()) {
      const res = await fetch(`${base}${path}`, { headers: { authorization: `Bearer ${token}` } });
      expect(res.status, path).toBe(401);
    }
    // A's session is untouched and still A's.
    expect(
      ok(
        await a.callTool({ name: "bash", arguments: { session_id: aSession, command: "tail -1 README.md" } }),
      ).stdout,
    ).toBe("secret\n");
  });

  it("a browser signed in to the page sends nothing by itself that opens it or another port's server", async () => {
    if (!existsSync(CHROMIUM)) {
      throw new Error(
        `Chromium is not installed at ${CHROMIUM}; this test needs it. Fix: run \`bash scripts/install-chromium.sh\`, or set DRYDOCK_CHROMIUM to a Chromium binary.`,
      );
    }
    const { server: other } = await serve();
    const otherBase = other.url.replace(/\/mcp$/, "");
    const profile = mkdtempSync(join(tmpdir(), "drydock-chromium-"));
    const context = await chromium.launchPersistentContext(profile, {
      executablePath: CHROMIUM,
      headless: true,
      args: [
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-background-networking",
        "--no-first-run",
      ],
    });
    try {
      const page = await context.newPage();
      await page.goto(`${base}/?token=${liveKey}`);
      await page.waitForSelector(`tr.session[data-id="${aSession}"]`);
      // What another tab (or a page of another port, replaying the browser) sends by itself opens
      // neither this server's data nor another server's on another port.
      const tab = await context.newPage();
      for (const url of [
        `${base}/live/api/sessions`,
        `${base}/live/api/sessions/${aSession}/events`,
        `${otherBase}/live/api/sessions`,
      ]) {
        const res = await tab.goto(url);
        expect(res?.status(), url).toBe(401);
        expect(await res?.text(), url).not.toContain(aSession);
      }
      // The tab holds a pass; the browser holds no cookie for any port.
      const held = await page.evaluate(() => Object.values(sessionStorage));
      expect(held).toHaveLength(1);
      expect(held[0]).not.toContain(liveKey);
      expect(await context.cookies()).toEqual([]);
      // The other server's page, in the same browser, has no pass of its own: it asks for its key.
      await tab.goto(`${otherBase}/`);
      await tab.waitForSelector("#sign-in:not([hidden])");
      expect(await tab.evaluate(() => Object.keys(sessionStorage))).toEqual([]);

      // The pass itself, replayed by hand: to another port's server it is nothing; as a cookie, or
      // minted for another port, or past its age, it opens nothing here either.
      const pass = held[0]!;
      const api = (at: string, headers: Record<string, string>) =>
        fetch(`${at}/live/api/sessions`, { headers });
      expect((await api(base, { authorization: `Bearer ${pass}` })).status).toBe(200);
      expect((await api(otherBase, { authorization: `Bearer ${pass}` })).status).toBe(401);
      expect((await api(base, { cookie: `drydock_live_${port}=${pass}` })).status).toBe(401);
      expect(
        (await api(base, { cookie: `drydock_live_${port}=${livePass(liveKey, port, Date.now())}` })).status,
      ).toBe(401);
      const otherPort = port === 65_535 ? port - 1 : port + 1;
      expect(
        (await api(base, { authorization: `Bearer ${livePass(liveKey, otherPort, Date.now())}` })).status,
      ).toBe(401);
      const expired = livePass(liveKey, port, Date.now() - (LIVE_PASS_MAX_AGE_S + 5) * 1000);
      expect((await api(base, { authorization: `Bearer ${expired}` })).status).toBe(401);
      const future = livePass(liveKey, port, Date.now() + 3_600_000);
      expect((await api(base, { authorization: `Bearer ${future}` })).status).toBe(401);
    } finally {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
    }
  });

  it("never sends the live key to an MCP client: not in a tool's reply, not in a header", async () => {
    ok(await a.callTool({ name: "session_list", arguments: {} }));
    ok(await a.callTool({ name: "session_diff", arguments: { session_id: aSession } }));
    ok(await a.callTool({ name: "get_current_task", arguments: { session_id: aSession } }));
    failure(await b.callTool({ name: "session_diff", arguments: { session_id: aSession } }));
    // A refused request's answer too.
    const refused = await fetch(server.url, {
      method: "POST",
      headers: { "content-type": "application/json" },
    });
    received.push(JSON.stringify([...refused.headers.entries()]), await refused.text());
    expect(received.length).toBeGreaterThan(10);
    const everything = received.join("\n");
    expect(everything).toContain(aSession);
    expect(everything).not.toContain(liveKey);
  });
});
