/**
 * A session's egress, when it has an allowlist: the egress proxy listening on a private socket in
 * the session's directory on the host, the relay to it in the box (drydock's stream relay: no host
 * path in the box), and a copy of the host's CA bundle written into the box at
 * /run/drydock/ca-certificates.crt. Without an allowlist nothing of this exists and nothing leaves
 * the box. The proxy refuses the engine's network gateways as the host's own addresses: with an
 * engine whose bridges are not the host's interfaces (rootless, in a VM), the interfaces alone
 * would not name them.
 */
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import type { AddressRange } from "../gateway/egress-address-policy.js";
import { resolveCaBundle } from "../gateway/egress-ca.js";
import { hostDial } from "../gateway/egress-dial.js";
import { EgressProxy } from "../gateway/egress-proxy.js";
import type { Box } from "../sandbox/box.js";
import { RUN_DIR_IN_BOX } from "../sandbox/box-profile.js";
import { CA_BUNDLE_NAME, EGRESS_RELAY_PORT, EGRESS_SOCKET_NAME } from "../sandbox/egress-env.js";
import { ensureStreamRelay } from "../sandbox/stream-relay.js";
import { CommandExitError } from "../util/errors.js";

export interface SessionEgressOptions {
  sessionId: string;
  box: Box;
  /** The session's private directory on the host, where the proxy's socket goes. */
  gatewayDir: string;
  /** Canonical rules; must not be empty. */
  allowlist: readonly string[];
  /** Host CA bundle to give the box; default `resolveCaBundle()`. */
  caFile?: string;
  /** Ranges the operator opened (`--egress-allow-private`); default none. */
  allowPrivate?: readonly AddressRange[];
}

/** The largest CA bundle given to a box (the system's is about 200 KiB). */
const MAX_CA_BUNDLE_BYTES = 2 * 1024 * 1024;

/** Starts a session's egress; leaves nothing running on failure. */
export async function startSessionEgress(options: SessionEgressOptions): Promise<EgressProxy> {
  await writeCaBundle(options.box, options.caFile ?? resolveCaBundle());
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
    await ensureStreamRelay(options.box, EGRESS_RELAY_PORT, socketPath, "egress relay", undefined, true);
  } catch (error) {
    await proxy.close();
    throw error;
  }
  return proxy;
}

/**
 * The host's CA bundle into the box's /run/drydock (a tmpfs of root's on Docker: written as root,
 * so the agent cannot change it there; on Kubernetes a Pod runs as one user and the file is its).
 */
async function writeCaBundle(box: Box, caFile: string): Promise<void> {
  const bundle = await readFile(caFile);
  if (bundle.length > MAX_CA_BUNDLE_BYTES) {
    throw new Error(
      `the CA bundle ${caFile} is ${bundle.length} bytes, more than the ${MAX_CA_BUNDLE_BYTES} a box is given`,
    );
  }
  const path = `${RUN_DIR_IN_BOX}/${CA_BUNDLE_NAME}`;
  const result = await box.engine.exec(
    box.id,
    ["sh", "-c", 'cat > "$1" && chmod 0644 "$1"', "drydock-ca", path],
    {
      user: "0",
      stdin: bundle,
      timeoutMs: 30_000,
    },
  );
  if (result.exitCode !== 0) {
    throw new CommandExitError(
      result.exitCode,
      result.stderr.toString("utf8"),
      `writing the CA bundle to ${path} in the box`,
    );
  }
}
