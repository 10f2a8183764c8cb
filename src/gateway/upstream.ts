import {
  request as httpRequest,
  type IncomingHttpHeaders,
  type IncomingMessage,
  type OutgoingHttpHeaders,
} from "node:http";
import { request as httpsRequest } from "node:https";

/**
 * The only request headers that go upstream as the client sent them, each for a reason. Every
 * other header is dropped: credentials (the real key is added), cookies, hop-by-hop headers, and
 * those that choose what the operator's key bills and enables (`OpenAI-Organization`,
 * `OpenAI-Project`, `OpenAI-Beta`, `x-goog-user-project`), SDK telemetry (`x-stainless-*`,
 * `x-goog-api-client`) and anything made up, which would only carry the box's words further.
 */
export const FORWARDED_REQUEST_HEADERS: readonly string[] = [
  // JSON or an event stream: the client asks for the form it parses.
  "accept",
  // The client library and its version; providers read it to work around a client's bugs.
  "user-agent",
  // Anthropic requires it: the API version the request is written for.
  "anthropic-version",
];

/**
 * The header that turns on Anthropic beta features (larger contexts, file storage, new server
 * tools): forwarded only with the values the operator allows, since a beta changes what the key
 * is billed for and reaches.
 */
const ANTHROPIC_BETA = "anthropic-beta";

/** Operator setting (drydock's environment): the `anthropic-beta` values a box may ask for, comma-separated. */
export const ANTHROPIC_BETA_ENV = "DRYDOCK_ANTHROPIC_BETA";

/** The beta names in a comma-separated list, such as `DRYDOCK_ANTHROPIC_BETA` or an `anthropic-beta` header. */
export function betaNames(list: string | undefined): string[] {
  return (list ?? "")
    .split(",")
    .map((name) => name.trim())
    .filter(Boolean);
}

/**
 * The headers to send upstream: the listed ones the client sent, the `anthropic-beta` values in
 * `allowedBetas`, the real key, a JSON content type when there is a body (the gateway sends the
 * JSON it checked), its length, and compression off (usage is read from the body on the way back).
 */
export function upstreamRequestHeaders(
  incoming: IncomingHttpHeaders,
  auth: [name: string, value: string] | undefined,
  bodyBytes: number,
  allowedBetas: ReadonlySet<string> = new Set(),
): OutgoingHttpHeaders {
  const headers: OutgoingHttpHeaders = {};
  for (const name of FORWARDED_REQUEST_HEADERS) {
    const value = incoming[name];
    if (value !== undefined) headers[name] = value;
  }
  const betas = betaNames(String(incoming[ANTHROPIC_BETA] ?? "")).filter((name) => allowedBetas.has(name));
  if (betas.length > 0) headers[ANTHROPIC_BETA] = betas.join(",");
  if (bodyBytes > 0) headers["content-type"] = "application/json";
  headers["accept-encoding"] = "identity";
  headers["content-length"] = bodyBytes;
  if (auth) headers[auth[0]] = auth[1];
  return headers;
}

/** Response headers that belong to one connection, never passed on (RFC 9110 §7.6.1), and those we set ourselves. */
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
