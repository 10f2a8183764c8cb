/**
 * The box's only way to a model: socat listening on 127.0.0.1:RELAY_PORT inside the box, relaying
 * to the session gateway's unix socket bind-mounted at /run/drydock. The box keeps network none.
 */
import { GATEWAY_DIR_IN_BOX } from "../../sandbox/box-profile.js";
import type { Box } from "../../sandbox/box.js";
import { ensureSocketRelay } from "../../sandbox/socket-relay.js";

/** The port aider's base URLs point at, inside the box's own network namespace. */
export const RELAY_PORT = 47_011;

/** The socket's name in the session's gateway directory (host) and in /run/drydock (box). */
export const GATEWAY_SOCKET_NAME = "gateway.sock";

/** Starts the relay unless it is already listening; cheap when it is. */
export function ensureRelay(box: Box, signal?: AbortSignal): Promise<void> {
  return ensureSocketRelay(
    box,
    RELAY_PORT,
    `${GATEWAY_DIR_IN_BOX}/${GATEWAY_SOCKET_NAME}`,
    "LLM relay",
    signal,
  );
}
