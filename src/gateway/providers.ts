/**
 * The providers the gateway routes, by the first path segment of a request: where each one's
 * upstream lives by default and how its real key goes into a request.
 */
export type UpstreamProvider = "openai" | "anthropic" | "gemini";
export type Provider = UpstreamProvider | "offline";

export const UPSTREAM_PROVIDERS: readonly UpstreamProvider[] = ["openai", "anthropic", "gemini"];
export const PROVIDERS: readonly Provider[] = [...UPSTREAM_PROVIDERS, "offline"];

/** Base URLs the path after the provider prefix is appended to (`/openai/v1/x` → `…/v1/x`). */
export const DEFAULT_UPSTREAMS: Readonly<Record<UpstreamProvider, string>> = {
  openai: "https://api.openai.com",
  anthropic: "https://api.anthropic.com",
  gemini: "https://generativelanguage.googleapis.com",
};

/** Hosts (`host` or `host:port`) the gateway may forward to unless configured otherwise. */
export const DEFAULT_ALLOWED_HOSTS: readonly string[] = [
  "api.openai.com",
  "api.anthropic.com",
  "generativelanguage.googleapis.com",
];

/** Host environment variables holding each provider's key, first found wins. */
export const KEY_ENV_NAMES: Readonly<Record<UpstreamProvider, readonly string[]>> = {
  openai: ["OPENAI_API_KEY"],
  anthropic: ["ANTHROPIC_API_KEY"],
  gemini: ["GEMINI_API_KEY", "GOOGLE_API_KEY"],
};

/** The header carrying the real key upstream. */
export function authHeader(provider: UpstreamProvider, key: string): [name: string, value: string] {
  switch (provider) {
    case "openai":
      return ["authorization", `Bearer ${key}`];
    case "anthropic":
      return ["x-api-key", key];
    case "gemini":
      return ["x-goog-api-key", key];
  }
}

export function isProvider(name: string): name is Provider {
  return (PROVIDERS as readonly string[]).includes(name);
}

/** Splits `/openai/v1/chat/completions?x=1` into the provider and the rest of the path. */
export function splitProviderPath(url: string): { provider: string; rest: string } {
  const match = /^\/([^/?]*)(.*)$/.exec(url);
  const provider = match?.[1] ?? "";
  let rest = match?.[2] ?? "";
  if (!rest.startsWith("/")) rest = "/" + rest;
  return { provider, rest };
}
