/**
 * The live view's routes on the HTTP server: the page at `/`, its script and style, and read-only
 * JSON and Server-Sent Events under /live/api/. Everything but the script and style needs the
 * live key (live-auth.ts), never the MCP token: programs send `Authorization: Bearer KEY`; the
 * page, opened once with `/?token=KEY`, trades the key for a pass at /live/api/pass and sends that
 * the same way. Nothing the server sets is sent back by a browser on its own: no cookie. The page
 * itself holds nothing secret and is answered without a credential (but a wrong `?token=`). No
 * route changes anything; only GET and HEAD are answered.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import { auditLogPath, readAuditLog } from "../../session/audit-log.js";
import { describeError } from "../../util/errors.js";
import { logger } from "../../util/log.js";
import { tokenMatches } from "../http-guard.js";
import { entryView } from "./entry-view.js";
import { liveAsset } from "./live-assets.js";
import { LIVE_PASS_MAX_AGE_S, bearerOf, livePass, livePassValid, queryKeyMatches } from "./live-auth.js";
import { LiveData, type LiveSources } from "./live-data.js";
import { LIVE_CSP, livePage, signInPage } from "./live-page.js";
import { runningCalls, type RunningCall } from "./running-calls.js";

const log = logger("live");

/** How often a followed log is read again. */
export const LIVE_POLL_MS = 250;
const KEEP_ALIVE_MS = 15_000;
/** A running call's line is sent again this often when it printed nothing new (its time goes on). */
const RUNNING_RESEND_MS = 1_000;
/**
 * A browser that reads the stream slower than it is written falls behind: past this much unsent,
 * running calls' updates (each superseded by the next) wait, so a stalled reader costs no more.
 */
const MAX_UNSENT_BYTES = 64 * 1024;

const SESSION_ROUTE = /^\/live\/api\/sessions\/([^/]+)(\/diff|\/events)?$/;

export interface LiveViewOptions {
  /** The live key: the page's own credential, apart from the MCP token. */
  key: string;
  /** Where the key was written (mode 0600), for the sign-in page. */
  keyFile: string;
  /** The page's own address, e.g. http://127.0.0.1:8080/ (known once the server listens). */
  url(): string;
  /** The port the server listens on: it is in the pass's MAC. */
  port(): number;
  /** The clock the pass's age is measured by (default Date.now). */
  now?: () => number;
}

const SECURITY_HEADERS = {
  "content-security-policy": LIVE_CSP,
  "x-content-type-options": "nosniff",
  "referrer-policy": "no-referrer",
  "x-frame-options": "DENY",
  "cache-control": "no-store",
};

export class LiveView {
  private readonly data: LiveData;
  private readonly streams = new Set<() => void>();

  constructor(
    sources: LiveSources,
    private readonly options: LiveViewOptions,
  ) {
    this.data = new LiveData(sources);
  }

  /** Answers one request for any path but /mcp (Host and Origin are checked before). */
  async handle(req: IncomingMessage, res: ServerResponse, url: URL): Promise<void> {
    const path = url.pathname;
    if (req.method !== "GET" && req.method !== "HEAD") {
      return this.json(
        res,
        405,
        { error: `${req.method} is not answered here: the live view is read-only (GET only)` },
        { allow: "GET, HEAD" },
      );
    }
    if (path === "/live/app.js") {
      return this.text(res, 200, "text/javascript; charset=utf-8", liveAsset("live-app.js"));
    }
    if (path === "/live/app.css")
      return this.text(res, 200, "text/css; charset=utf-8", liveAsset("live-app.css"));
    if (path === "/favicon.ico") {
      // Browsers ask for it on their own; there is none, and that is not an error worth a 404.
      res.writeHead(204, SECURITY_HEADERS);
      res.end();
      return;
    }
    if (path === "/") {
      // The page is the same for everyone and holds nothing secret; its script signs in. A wrong
      // key is said at once.
      const given = url.searchParams.get("token");
      if (given !== null && !queryKeyMatches(given, this.options.key)) return this.signIn(res, true);
      return this.text(
        res,
        200,
        "text/html; charset=utf-8",
        livePage(this.options.url(), this.options.keyFile),
      );
    }
    if (!path.startsWith("/live/api/")) {
      return this.json(res, 404, { error: `not found: the MCP endpoint is /mcp, the live view is /` });
    }
    if (!this.signedIn(req)) {
      return this.json(
        res,
        401,
        {
          error: `unauthorized: the live view takes its own key (written to ${this.options.keyFile}), not the MCP bearer token; send Authorization: Bearer <live key>, or open the live view at / with ?token=<live key>`,
        },
        { "www-authenticate": 'Bearer realm="drydock"' },
      );
    }
    if (path === "/live/api/pass") {
      // Only the key itself gets a pass: a pass cannot be traded for a longer-lived one.
      if (!tokenMatches(req.headers.authorization, this.options.key)) {
        return this.json(res, 401, {
          error: `unauthorized: a pass is given for the live key only (written to ${this.options.keyFile}), as Authorization: Bearer <live key>`,
        });
      }
      return this.json(res, 200, {
        pass: livePass(this.options.key, this.options.port(), this.now()),
        max_age_s: LIVE_PASS_MAX_AGE_S,
      });
    }
    if (path === "/live/api/sessions") return this.json(res, 200, { sessions: await this.data.sessions() });
    const match = SESSION_ROUTE.exec(path);
    const id = match ? await this.data.known(decodeURIComponent(match[1]!)) : undefined;
    if (!match || !id) {
      return this.json(res, 404, {
        error: match
          ? `no session ${match[1]} in this server's state directory; the sessions are listed at /live/api/sessions`
          : "not found: the live view's data is at /live/api/sessions and /live/api/sessions/ID[/diff|/events]",
      });
    }
    if (match[2] === "/events") return this.follow(req, res, id);
    if (match[2] === "/diff") {
      const abort = new AbortController();
      res.once("close", () => abort.abort());
      try {
        return this.json(res, 200, await this.data.diff(id, abort.signal));
      } catch (error) {
        return this.json(res, 200, {
          available: false,
          why: `the diff could not be taken: ${describeError(error)}`,
        });
      }
    }
    return this.json(res, 200, await this.data.detail(id));
  }

  /** Ends every log being followed (the server is closing). */
  close(): void {
    for (const end of [...this.streams]) end();
  }

  /** The live key or a pass it minted for this port, as a bearer header; nothing else (no cookie). */
  private signedIn(req: IncomingMessage): boolean {
    // Both are checked, so which one a request carries does not show in the time taken.
    const key = tokenMatches(req.headers.authorization, this.options.key);
    const given = bearerOf(req.headers.authorization);
    const pass =
      given !== undefined && livePassValid(given, this.options.key, this.options.port(), this.now());
    return key || pass;
  }

  private now(): number {
    return (this.options.now ?? Date.now)();
  }

  private signIn(res: ServerResponse, wrongToken: boolean): void {
    this.text(
      res,
      401,
      "text/html; charset=utf-8",
      signInPage(this.options.url(), this.options.keyFile, wrongToken),
    );
  }

  private text(res: ServerResponse, status: number, type: string, body: string): void {
    res.writeHead(status, { ...SECURITY_HEADERS, "content-type": type });
    res.end(res.req.method === "HEAD" ? undefined : body);
  }

  private json(
    res: ServerResponse,
    status: number,
    value: unknown,
    headers: Record<string, string> = {},
  ): void {
    res.writeHead(status, {
      ...SECURITY_HEADERS,
      "content-type": "application/json; charset=utf-8",
      ...headers,
    });
    res.end(res.req.method === "HEAD" ? undefined : JSON.stringify(value));
  }

  /**
   * The session's log as Server-Sent Events: every entry so far, then each one as it is appended
   * (read again every 250 ms), each event's id the byte offset after it, so a reconnecting browser
   * (Last-Event-ID) goes on where it stopped. An `end` event follows the session's last line.
   * Between them, a `running` event (no id: it is not in the log) for each call under way in this
   * process, with the last lines it printed, when they change or a second has passed; the call's
   * last line in the log follows it and takes its place.
   */
  private follow(req: IncomingMessage, res: ServerResponse, id: string): void {
    const path = auditLogPath(id, this.data.sources.state)!;
    const resumeAt = Number(req.headers["last-event-id"]);
    let offset = Number.isSafeInteger(resumeAt) && resumeAt > 0 ? resumeAt : 0;
    res.writeHead(200, {
      ...SECURITY_HEADERS,
      "content-type": "text/event-stream; charset=utf-8",
      connection: "keep-alive",
      "x-accel-buffering": "no",
    });
    if (req.method === "HEAD") {
      res.end();
      return;
    }
    res.write("retry: 1000\n\n");
    let reading = false;
    let done = false;
    const sent = new Map<RunningCall, { version: number; atMs: number }>();
    /** After the log is read: a call is removed before its last line is written, so none of these has ended. */
    const sendRunning = () => {
      if (res.writableLength > MAX_UNSENT_BYTES) return;
      const now = Date.now();
      const calls = runningCalls.of(id);
      for (const call of calls) {
        const last = sent.get(call);
        if (last && last.version === call.version && now - last.atMs < RUNNING_RESEND_MS) continue;
        sent.set(call, { version: call.version, atMs: now });
        res.write(`event: running\ndata: ${JSON.stringify(entryView(call.entry(id, now)))}\n\n`);
      }
      for (const call of sent.keys()) if (!calls.includes(call)) sent.delete(call);
    };
    const read = async () => {
      if (reading || done) return;
      reading = true;
      try {
        const got = await readAuditLog(path, offset);
        if (done) return;
        offset = got.offset;
        got.entries.forEach((entry, i) => {
          const last = i === got.entries.length - 1;
          res.write(
            `event: entry\n${last ? `id: ${got.offset}\n` : ""}data: ${JSON.stringify(entryView(entry))}\n\n`,
          );
        });
        if (got.entries.some((e) => e.tool === "session_end")) {
          res.write("event: end\ndata: {}\n\n");
          end();
          return;
        }
        sendRunning();
      } catch (error) {
        log.warn(`session ${id}: its log could not be read: ${describeError(error)}`);
      } finally {
        reading = false;
      }
    };
    const poll = setInterval(() => void read(), LIVE_POLL_MS);
    const keepAlive = setInterval(() => res.write(": keep-alive\n\n"), KEEP_ALIVE_MS);
    const end = () => {
      if (done) return;
      done = true;
      clearInterval(poll);
      clearInterval(keepAlive);
      this.streams.delete(end);
      res.end();
    };
    this.streams.add(end);
    res.once("close", end);
    void read();
  }
}
