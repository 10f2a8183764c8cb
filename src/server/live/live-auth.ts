/**
 * How a person signs in to the live view. The page has a credential of its own, the live key,
 * which MCP clients never receive: the MCP bearer token opens /mcp and nothing else, since every
 * HTTP client holds it and the page shows every client's sessions. A browser opens `/?token=KEY`
 * once and gets a cookie that is not the key but an HMAC, keyed by it, over the server's port and
 * the time it was issued: cookies are not port-scoped, so the port in the cookie's name and in its
 * MAC keeps a cookie from one drydock on this host out of another, and the issue time lets the
 * server refuse a cookie past its age whatever the browser kept. Pure; compared in constant time.
 */
import { createHash, createHmac, timingSafeEqual } from "node:crypto";

/** How long a sign-in lasts: the cookie's Max-Age, enforced by the server as well. */
export const LIVE_COOKIE_MAX_AGE_S = 12 * 60 * 60;
/** Issue times this far ahead of the server's clock are tolerated (a clock stepped back). */
const CLOCK_SKEW_S = 60;

/** The cookie's name for a server on this port: browsers send every port's cookies to each. */
export function liveCookieName(port: number): string {
  return `drydock_live_${port}`;
}

function mac(key: string, port: number, issuedAtS: number): string {
  return createHmac("sha256", key).update(`drydock live view\0${port}\0${issuedAtS}`).digest("base64url");
}

/** The cookie's value: the issue time (Unix seconds) and an HMAC over port and time, keyed by the live key. */
export function liveCookieValue(key: string, port: number, issuedAtMs: number): string {
  const issuedAtS = Math.floor(issuedAtMs / 1000);
  return `${issuedAtS}.${mac(key, port, issuedAtS)}`;
}

/** The Set-Cookie header: this port's name, the whole origin, HttpOnly, SameSite=Strict, 12 hours. */
export function liveCookieHeader(key: string, port: number, nowMs: number): string {
  return `${liveCookieName(port)}=${liveCookieValue(key, port, nowMs)}; Path=/; HttpOnly; SameSite=Strict; Max-Age=${LIVE_COOKIE_MAX_AGE_S}`;
}

function sameText(given: string, expected: string): boolean {
  const a = createHash("sha256").update(given).digest();
  const b = createHash("sha256").update(expected).digest();
  return timingSafeEqual(a, b);
}

/** Whether one cookie value was minted by this key for this port and is still within its age. */
function valueValid(value: string, key: string, port: number, nowMs: number): boolean {
  const match = /^(\d{1,12})\.([A-Za-z0-9_-]{1,100})$/.exec(value);
  if (!match) return false;
  const issuedAtS = Number(match[1]);
  const signed = sameText(match[2]!, mac(key, port, issuedAtS));
  const ageS = nowMs / 1000 - issuedAtS;
  return signed && ageS <= LIVE_COOKIE_MAX_AGE_S && ageS >= -CLOCK_SKEW_S;
}

/** Whether a Cookie header carries a live cookie this server minted, for its port, within its age. */
export function liveCookieMatches(
  cookieHeader: string | undefined,
  key: string,
  port: number,
  nowMs: number,
): boolean {
  if (!cookieHeader) return false;
  const name = liveCookieName(port);
  let found = false;
  for (const part of cookieHeader.split(";")) {
    const eq = part.indexOf("=");
    if (eq < 0 || part.slice(0, eq).trim() !== name) continue;
    // Every candidate is checked, so how many there are and where the match sits do not show.
    if (valueValid(part.slice(eq + 1).trim(), key, port, nowMs)) found = true;
  }
  return found;
}

/** Whether a `?token=` value is the live key. */
export function queryKeyMatches(given: string | null, key: string): boolean {
  return given !== null && sameText(given, key);
}
