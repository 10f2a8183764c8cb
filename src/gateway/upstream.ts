import {
  request as httpRequest,
  type IncomingHttpHeaders,
  type IncomingMessage,
  type OutgoingHttpHeaders,
} from "node:http";
import { request as httpsRequest } from "node:https";
import { AUTH_HEADERS } from "./providers.js";

/** Headers that belong to one connection, never forwarded (RFC 9110 §7.6.1), and those we set ourselves. */
const HOP_BY_HOP = [
  "connection",
  "keep-alive",
  "proxy-authenticate",
  "proxy-authorization",
  "proxy-connection",
  "te",
  "trailer",
  "transfer-encoding",
  "upgrade",
  "host",
  "content-length",
];

/**
 * The headers to send upstream: the client's, less hop-by-hop headers and every credential, with
 * the real key added and compression off (usage is read from the body on the way back).
 */
export function upstreamRequestHeaders(
  incoming: IncomingHttpHeaders,
  auth: [name: string, value: string] | undefined,
  bodyBytes: number,
): OutgoingHttpHeaders {
  const named = String(incoming.connection ?? "")
    .split(",")
    .map((name) => name.trim().toLowerCase())
    .filter(Boolean);
  const drop = new Set([...HOP_BY_HOP, ...AUTH_HEADERS, ...named, "accept-encoding", "cookie"]);
  const headers: OutgoingHttpHeaders = {};
  for (const [name, value] of Object.entries(incoming)) {
    if (value !== undefined && !drop.has(name.toLowerCase())) headers[name] = value;
  }
  headers["accept-encoding"] = "identity";
  headers["content-length"] = bodyBytes;
  if (auth) headers[auth[0]] = auth[1];
  return headers;
}

/** The upstream's response headers fit to pass back: no hop-by-hop headers, no cookies. */
export function clientResponseHeaders(incoming: IncomingHttpHeaders): OutgoingHttpHeaders {
  const drop = new Set([...HOP_BY_HOP, "set-cookie", "content-encoding"]);
  const headers: OutgoingHttpHeaders = {};
  for (const [name, value] of Object.entries(incoming)) {
    if (value !== undefined && !drop.has(name.toLowerCase())) headers[name] = value;
  }
  return headers;
}

/** Sends one request upstream; resolves with the response as soon as its headers arrive. */
export function sendUpstream(
  url: URL,
  method: string,
  headers: OutgoingHttpHeaders,
  body: Buffer,
  signal: AbortSignal,
): Promise<IncomingMessage> {
  return new Promise((resolve, reject) => {
    const send = url.protocol === "https:" ? httpsRequest : httpRequest;
    const request = send(url, { method, headers, signal }, resolve);
    request.on("error", reject);
    request.end(body);
  });
}
