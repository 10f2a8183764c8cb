/**
 * A session's egress, when it has an allowlist: the host's CA bundle copied into the gateway
 * directory, the egress proxy listening beside the gateway's socket, and the relay to it in the
 * box. Without an allowlist nothing of this exists and nothing leaves the box. The proxy refuses
 * the engine's network gateways as the host's own addresses: with an engine whose bridges are not
 * the host's interfaces (rootless, in a VM), the interfaces alone would not name them.
 */
import { chmod, copyFile } from "node:fs/promises";
import { join } from "node:path";
import type { AddressRange } from "../gateway/egress-address-policy.js";
import { resolveCaBundle } from "../gateway/egress-ca.js";
import { hostDial } from "../gateway/egress-dial.js";
import { EgressProxy } from "../gateway/egress-proxy.js";
import { grantBoxAccess } from "../gateway/socket-dir.js";
import type { Box } from "../sandbox/box.js";
import { GATEWAY_DIR_IN_BOX } from "../sandbox/box-profile.js";
import { CA_BUNDLE_NAME, EGRESS_RELAY_PORT, EGRESS_SOCKET_NAME } from "../sandbox/egress-env.js";
import { ensureSocketRelay } from "../sandbox/socket-relay.js";

export interface SessionEgressOptions {
  sessionId: string;
  box: Box;
  /** The session's gateway directory (bind-mounted read-only at /run/drydock). */
  gatewayDir: string;
  /** Canonical rules; must not be empty. */
  allowlist: readonly string[];
  /** Host CA bundle to give the box; default `resolveCaBundle()`. */
  caFile?: string;
  /** Ranges the operator opened (`--egress-allow-private`); default none. */
  allowPrivate?: readonly AddressRange[];
}

/** Starts a session's egress; leaves nothing running on failure. */
export async function startSessionEgress(options: SessionEgressOptions): Promise<EgressProxy> {
  const bundle = join(options.gatewayDir, CA_BUNDLE_NAME);
  await copyFile(options.caFile ?? resolveCaBundle(), bundle);
  await chmod(bundle, 0o644);
  const socketPath = join(options.gatewayDir, EGRESS_SOCKET_NAME);
  const engine = options.box.engine;
  // Read at each dial: a network made after the session started is the host's too.
  const engineGateways = async () => (await engine.networkGateways?.()) ?? [];
  const proxy = await EgressProxy.start({
    socketPath,
    allowlist: options.allowlist,
    label: options.sessionId,
    dial: hostDial({ allowPrivate: options.allowPrivate, engineGateways }),
  });
  try {
    await grantBoxAccess(socketPath);
    await ensureSocketRelay(
      options.box,
      EGRESS_RELAY_PORT,
      `${GATEWAY_DIR_IN_BOX}/${EGRESS_SOCKET_NAME}`,
      "egress relay",
    );
  } catch (error) {
    await proxy.close();
    throw error;
  }
  return proxy;
}
