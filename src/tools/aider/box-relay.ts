/**
 * The box's only way to a model: the box agent's relay listening on 127.0.0.1:RELAY_PORT inside
 * the box, carried over drydock's own stream to the session gateway's unix socket on the host
 * (src/sandbox/stream-relay.ts). The box keeps network none and has no host path.
 */
import { join } from "node:path";
import type { Box } from "../../sandbox/box.js";
import { ensureStreamRelay } from "../../sandbox/stream-relay.js";

/** The port aider's base URLs point at, inside the box's own network namespace. */
export const RELAY_PORT = 47_011;

/** The gateway's socket in the session's gateway directory on the host. */
export const GATEWAY_SOCKET_NAME = "gateway.sock";

/** Starts the relay unless it is already running; cheap when it is. */
export function ensureRelay(box: Box, gatewayDir: string, signal?: AbortSignal): Promise<void> {
  return ensureStreamRelay(box, RELAY_PORT, join(gatewayDir, GATEWAY_SOCKET_NAME), "LLM relay", signal);
}
