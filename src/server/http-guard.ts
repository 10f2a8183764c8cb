/**
 * The checks every HTTP request passes before the protocol sees it, as pure functions: a bearer
 * token compared in constant time, Host and Origin against DNS rebinding.
 */
import { createHash, timingSafeEqual } from "node:crypto";

/** Compares digests, so neither the token's content nor its length leaks through timing. */
export function tokenMatches(header: string | undefined, token: string): boolean {
  if (!header) return false;
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
  if (!match) return false;
  const given = createHash("sha256").update(match[1]!).digest();
  const expected = createHash("sha256").update(token).digest();
  return timingSafeEqual(given, expected);
}

const LOOPBACK = new Set(["127.0.0.1", "localhost", "::1", "[::1]"]);

/** Host names (host:port) a request may name: the bound address, and loopback names when bound to loopback. */
export function allowedHosts(host: string, port: number, extra: string[] = []): Set<string> {
  const names = new Set<string>([...extra]);
  const bracket = host.includes(":") && !host.startsWith("[") ? `[${host}]` : host;
  names.add(`${bracket}:${port}`);
  if (LOOPBACK.has(host)) for (const n of ["127.0.0.1", "localhost", "[::1]"]) names.add(`${n}:${port}`);
  return names;
}

export function hostAllowed(hostHeader: string | undefined, allowed: Set<string>): boolean {
  return hostHeader !== undefined && allowed.has(hostHeader.toLowerCase());
}

/** No Origin (a non-browser client) is fine; a browser's Origin must be one of ours. */
export function originAllowed(origin: string | undefined, allowed: Set<string>): boolean {
  if (origin === undefined) return true;
  try {
    const url = new URL(origin);
    return (url.protocol === "http:" || url.protocol === "https:") && allowed.has(url.host.toLowerCase());
  } catch {
    return false;
  }
}
