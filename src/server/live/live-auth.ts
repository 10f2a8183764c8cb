/**
 * How a browser signs in to the live view: it opens `/?token=…` once, and gets a cookie that is
 * not the token itself but a value derived from it, so the cookie opens the read-only page and
 * never the MCP endpoint. Pure; compared in constant time like the bearer token.
 */
import { createHash, createHmac, timingSafeEqual } from "node:crypto";

export const LIVE_COOKIE = "drydock_live";

/** The cookie's value for a token: an HMAC, so the token cannot be read back from it. */
export function liveCookieValue(token: string): string {
  return createHmac("sha256", token).update("drydock live view").digest("base64url");
}

/** The Set-Cookie header for a token: HttpOnly, SameSite=Strict, for the whole origin, this browser session only. */
export function liveCookieHeader(token: string): string {
  return `${LIVE_COOKIE}=${liveCookieValue(token)}; HttpOnly; SameSite=Strict; Path=/`;
}

function sameText(given: string, expected: string): boolean {
  const a = createHash("sha256").update(given).digest();
  const b = createHash("sha256").update(expected).digest();
  return timingSafeEqual(a, b);
}

/** Whether a Cookie header carries the live view's cookie for this token. */
export function liveCookieMatches(cookieHeader: string | undefined, token: string): boolean {
  if (!cookieHeader) return false;
  const expected = liveCookieValue(token);
  let found = false;
  for (const part of cookieHeader.split(";")) {
    const eq = part.indexOf("=");
    if (eq < 0 || part.slice(0, eq).trim() !== LIVE_COOKIE) continue;
    // Every candidate is compared, so how many there are and where the match sits do not show.
    if (sameText(part.slice(eq + 1).trim(), expected)) found = true;
  }
  return found;
}

/** Whether a `?token=` value is the token. */
export function queryTokenMatches(given: string | null, token: string): boolean {
  return given !== null && sameText(given, token);
}
