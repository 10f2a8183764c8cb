import type { RefusalCode } from "./gateway-errors.js";
import type { LlmMode } from "./llm-mode.js";
import type { ProviderKeys } from "./provider-keys.js";
import {
  authHeader,
  DEFAULT_UPSTREAMS,
  KEY_ENV_NAMES,
  type Provider,
  type UpstreamProvider,
} from "./providers.js";
import { exchangeKey, normalizePath, requestSummary } from "./record-replay.js";

/** Who answers a call, or why nobody will. */
export type RoutePlan =
  | { kind: "refuse"; code: RefusalCode; message: string }
  | { kind: "offline" }
  | { kind: "replay"; key: string }
  | { kind: "upstream"; url: URL; auth: [name: string, value: string] };

export interface RouteContext {
  mode: LlmMode;
  keys: ProviderKeys;
  upstreams?: Partial<Record<UpstreamProvider, string>>;
  /** Lower-case `host` or `host:port` entries. */
  allowedHosts: ReadonlySet<string>;
  /** Whether the replay file has an answer for a request key. */
  hasRecording(key: string): boolean;
}

const LOOPBACK = ["127.0.0.1", "localhost", "[::1]"];

/**
 * Decides a call's route from the mode, the host's keys and the allowlist: replay answers
 * everything from the file; `/offline` (and, under `--llm offline`, `/openai`) goes to the offline
 * model; anything else goes upstream only with a key, to an allowed host, over https or loopback.
 */
export function planRoute(
  context: RouteContext,
  call: { provider: Provider; method: string; path: string; body: string },
): RoutePlan {
  const { mode } = context;
  const { provider, method, path, body } = call;
  if (mode.kind === "replay") {
    const key = exchangeKey(provider, method, path, body);
    if (context.hasRecording(key)) return { kind: "replay", key };
    return refuse(
      "replay_miss",
      `no recorded answer in ${mode.file} for this request (${requestSummary(provider, method, path, body)}); record it with --llm record:${mode.file}`,
    );
  }
  if (provider === "offline") return { kind: "offline" };
  if (mode.kind === "offline") {
    if (provider === "openai") return { kind: "offline" };
    return refuse(
      "offline_only",
      `drydock runs with --llm offline, so ${provider} is not called; only the offline model answers (model openai/drydock-offline)`,
    );
  }
  const key = context.keys[provider];
  if (!key) {
    return refuse(
      "no_key",
      `the host has no ${provider} key (${KEY_ENV_NAMES[provider].join(" or ")}): set it in drydock's environment or .env file, or use the offline model (model openai/drydock-offline)`,
    );
  }
  const base = (context.upstreams?.[provider] ?? DEFAULT_UPSTREAMS[provider]).replace(/\/+$/, "");
  let url: URL;
  try {
    url = new URL(base + normalizePath(path));
  } catch {
    return refuse("upstream_not_allowed", `upstream ${base} for ${provider} is not a URL`);
  }
  const host = url.host.toLowerCase();
  if (!context.allowedHosts.has(host) && !context.allowedHosts.has(url.hostname.toLowerCase())) {
    return refuse(
      "upstream_not_allowed",
      `upstream ${host} is not on the allowlist (${[...context.allowedHosts].join(", ")}); the request was not sent`,
    );
  }
  if (url.protocol !== "https:" && !LOOPBACK.includes(url.hostname)) {
    return refuse(
      "upstream_not_allowed",
      `upstream ${url.origin} is not https; keys are only sent over TLS (or to loopback)`,
    );
  }
  return { kind: "upstream", url, auth: authHeader(provider, key.value) };
}

function refuse(code: RefusalCode, message: string): RoutePlan {
  return { kind: "refuse", code, message };
}
