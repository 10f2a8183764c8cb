/**
 * How a person signs in to the live view. The page has a credential of its own, the live key,
 * which MCP clients never receive: the MCP bearer token opens /mcp and nothing else, since every
 * HTTP client holds it and the page shows every client's sessions.
 *
 * No credential of the page is one a browser sends by itself. A cookie would be: browsers send a
 * host's cookies to every port of it, so another program on 127.0.0.1 (or a replay from another
 * port) would receive it. Instead the page's script trades the key (from `/?token=KEY`, then
 * removed from the address bar) for a pass, keeps the pass in this origin's sessionStorage
 * (scheme, host and port: no other port's page can read it), and sends it as
 * `Authorization: Bearer PASS` on each request it makes. The pass is not the key but an HMAC,
 * keyed by it, over the server's port and the time it was issued, so it opens this server only,
 * for 12 hours, whatever the browser kept. Pure; compared in constant time.
 */
import { createHash, createHmac, timingSafeEqual } from "node:crypto";

/** How long a pass lasts. */
export const LIVE_PASS_MAX_AGE_S = 12 * 60 * 60;
/** Issue times this far ahead of the server's clock are tolerated (a clock stepped back). */
const CLOCK_SKEW_S = 60;

function mac(key: string, port: number, issuedAtS: number): string {
  return createHmac("sha256", key).update(`drydock live view\0${port}\0${issuedAtS}`).digest("base64url");
}

/** A pass: the issue time (Unix seconds) and an HMAC over port and time, keyed by the live key. */
export function livePass(key: string, port: number, issuedAtMs: number): string {
  const issuedAtS = Math.floor(issuedAtMs / 1000);
  return `${issuedAtS}.${mac(key, port, issuedAtS)}`;
}

function sameText(given: string, expected: string): boolean {
  const a = createHash("sha256").update(given).digest();
  const b = createHash("sha256").update(expected).digest();
  return timingSafeEqual(a, b);
}

/** Whether `value` is a pass this key minted for this port, still within its age. */
export function livePassValid(value: string, key: string, port: number, nowMs: number): boolean {
  const match = /^(\d{1,12})\.([A-Za-z0-9_-]{1,100})$/.exec(value);
  if (!match) return false;
  const issuedAtS = Number(match[1]);
  const signed = sameText(match[2]!, mac(key, port, issuedAtS));
  const ageS = nowMs / 1000 - issuedAtS;
  return signed && ageS <= LIVE_PASS_MAX_AGE_S && ageS >= -CLOCK_SKEW_S;
}

/** The credential of an `Authorization: Bearer …` header, or undefined. */
export function bearerOf(header: string | undefined): string | undefined {
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header ?? "");
  return match?.[1];
}

/** Whether a `?token=` value is the live key. */
export function queryKeyMatches(given: string | null, key: string): boolean {
  return given !== null && sameText(given, key);
}
