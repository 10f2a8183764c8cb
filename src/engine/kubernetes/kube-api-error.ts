/**
 * What a failed call to the Kubernetes API becomes. The client library's ApiException puts
 * "HTTP-Code: 403" on its first line and the API's own Status (whose message names the verb, the
 * resource, the namespace and the identity refused: `pods is forbidden: User "…" cannot create
 * resource "pods" …`) in its body; the message a person needs is the Status's, so every error
 * drydock gives keeps it. Only a connection that fails is "the engine does not answer"; a refusal
 * says what was refused and where the permissions drydock needs are written.
 */
import { DrydockError, EngineUnavailableError } from "../../util/errors.js";

/** The HTTP status of a failed API call, when it got that far. */
export function apiStatusOf(error: unknown): number | undefined {
  const code = (error as { code?: unknown }).code;
  return typeof code === "number" ? code : undefined;
}

/** The API's own words for a failed call (its Status message), else the error's first line. */
export function apiMessage(error: unknown): string {
  const body = (error as { body?: unknown }).body;
  let status: unknown = body;
  if (typeof body === "string") {
    try {
      status = JSON.parse(body);
    } catch {
      status = undefined;
    }
  }
  const message = (status as { message?: unknown } | undefined)?.message;
  if (typeof message === "string" && message) return message;
  return ((error as Error).message ?? String(error)).split("\n")[0] ?? "";
}

const NETWORK_CODES = /^(ECONNREFUSED|ENOTFOUND|ECONNRESET|ETIMEDOUT|EHOSTUNREACH|ENETUNREACH|EAI_AGAIN)$/;

/** Whether the call never reached an API server that answered. */
export function isUnreachable(error: unknown): boolean {
  const code = (error as { code?: unknown; cause?: { code?: unknown } }).code;
  const causeCode = (error as { cause?: { code?: unknown } }).cause?.code;
  return [code, causeCode].some((c) => typeof c === "string" && NETWORK_CODES.test(c));
}

export const RBAC_FIX =
  'grant it with the Role (in the namespace) or the ClusterRole (nodes, RuntimeClasses) of docs/kubernetes.md ("What the namespace needs"); `drydock doctor --engine` names every permission missing';

/**
 * A failed API call as drydock's error: unreachable → EngineUnavailableError; 403 → what was
 * refused, in the API's words, and where the needed Role is; anything else → the API's words.
 */
export function kubeApiError(engineName: string, what: string, error: unknown): DrydockError {
  if (error instanceof DrydockError) return error;
  if (isUnreachable(error)) {
    return new EngineUnavailableError(`${engineName}: ${apiMessage(error)}`, {
      cause: error,
      fix: "Check the cluster's API server answers (kubectl get nodes with the same kubeconfig and context); check with `drydock doctor --engine`",
    });
  }
  const status = apiStatusOf(error);
  if (status === 401) {
    return new DrydockError(
      "engine_forbidden",
      `${what} on ${engineName}: the API server does not know this client (${apiMessage(error)}); check the kubeconfig's credentials (an expired token or certificate?)`,
      { cause: error },
    );
  }
  if (status === 403) {
    return new DrydockError(
      "engine_forbidden",
      `${what} on ${engineName} was refused: ${apiMessage(error)}; ${RBAC_FIX}`,
      { cause: error },
    );
  }
  return new DrydockError("engine_error", `${what} on ${engineName} failed: ${apiMessage(error)}`, {
    cause: error,
  });
}
