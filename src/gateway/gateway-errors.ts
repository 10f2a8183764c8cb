/**
 * Error bodies in each provider's own shape, so that litellm (and so aider) shows our message as
 * it would show the provider's.
 */
export type RefusalCode =
  | "unknown_route"
  | "call_not_allowed"
  | "upstream_not_allowed"
  | "no_key"
  | "offline_only"
  | "limit_exceeded"
  | "replay_miss"
  | "bad_request"
  | "upstream_unreachable";

/**
 * The status of a refusal. Not 429 or 403: litellm maps those to errors aider retries for about a
 * minute (RateLimitError, APIError), while a 400 (BadRequestError) stops aider at once with the
 * message shown. An unknown route is a 404 and an unreachable upstream a 502.
 */
export function refusalStatus(code: RefusalCode): number {
  if (code === "unknown_route") return 404;
  if (code === "upstream_unreachable") return 502;
  return 400;
}

export function errorBody(provider: string, code: RefusalCode, message: string): string {
  const text = `drydock gateway: ${message}`;
  if (provider === "anthropic") {
    return JSON.stringify({ type: "error", error: { type: "invalid_request_error", message: text, code } });
  }
  if (provider === "gemini") {
    return JSON.stringify({
      error: { code: refusalStatus(code), message: text, status: "FAILED_PRECONDITION", reason: code },
    });
  }
  return JSON.stringify({ error: { message: text, type: "drydock_gateway", code } });
}
