import type { IncomingHttpHeaders, OutgoingHttpHeaders } from "node:http";
import type { OfflineModel } from "./offline-model.js";
import type { ReplayBook } from "./record-replay.js";
import type { RoutePlan } from "./route-plan.js";
import { clientResponseHeaders, sendUpstream, upstreamRequestHeaders } from "./upstream.js";

/** An answer on its way to the client, whoever gives it; the body is streamed through as it comes. */
export interface Answer {
  status: number;
  headers: OutgoingHttpHeaders;
  body: AsyncIterable<Buffer | string> | Iterable<string>;
  source: "upstream" | "offline" | "replay";
}

export interface AnswerCall {
  method: string;
  /** The path after the provider prefix. */
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
  signal: AbortSignal;
  /** The `anthropic-beta` values the operator allows to be forwarded. */
  anthropicBetas: ReadonlySet<string>;
}

/** Opens the answer a route plan names: the offline model, the replay file, or the upstream (headers arrived). */
export async function openAnswer(
  plan: Exclude<RoutePlan, { kind: "refuse" }>,
  call: AnswerCall,
  sources: { offline: OfflineModel; replay: ReplayBook | undefined },
): Promise<Answer> {
  if (plan.kind === "offline") {
    const answer = sources.offline.answer({ method: call.method, path: call.path, body: call.body });
    return {
      status: answer.status,
      headers: { "content-type": answer.contentType, "cache-control": "no-cache" },
      body: answer.chunks,
      source: "offline",
    };
  }
  if (plan.kind === "replay") {
    const exchange = sources.replay?.take(plan.key);
    if (!exchange) throw new Error(`the replay file has no answer for ${call.method} ${call.path}`);
    return {
      status: exchange.status,
      headers: { "content-type": exchange.contentType, "cache-control": "no-cache" },
      body: [exchange.body],
      source: "replay",
    };
  }
  const bytes = Buffer.from(call.body, "utf8");
  const headers = upstreamRequestHeaders(call.headers, plan.auth, bytes.length, call.anthropicBetas);
  const upstream = await sendUpstream(plan.url, call.method, headers, bytes, call.signal);
  return {
    status: upstream.statusCode ?? 502,
    headers: clientResponseHeaders(upstream.headers),
    body: upstream,
    source: "upstream",
  };
}
