/**
 * How the egress proxy reaches an allowed host: it resolves the name on the host, drops every
 * address egress-address-policy.ts refuses (the host's own, private, loopback, link-local and the
 * other local and reserved ranges, unless the operator opened them), and connects to an address it
 * checked: no second lookup stands between the check and the connection. An IP literal the
 * operator listed is checked the same way. The host's own addresses (every interface's, in any
 * state, and every engine network's gateway) are read at each dial, so an interface or a network
 * made after the proxy started is refused too.
 */
import { lookup } from "node:dns/promises";
import { connect, isIP, type Socket } from "node:net";
import { addressRefusal, type AddressRange, type EgressAddressPolicy } from "./egress-address-policy.js";
import { hostInterfaceAddresses } from "./host-addresses.js";

/** Opens a TCP connection to an allowed target; rejects with a message fit for the box's user. */
export type EgressDial = (host: string, port: number, signal: AbortSignal) => Promise<Socket>;

export const DEFAULT_CONNECT_TIMEOUT_MS = 15_000;

export interface HostDialOptions {
  /** Default 15,000 ms. */
  connectTimeoutMs?: number;
  /** Ranges the operator opened (`--egress-allow-private`); default none. */
  allowPrivate?: readonly AddressRange[];
  /**
   * The gateways of every network of the engine, read at each dial: addresses of the host (or of
   * the engine's host) that no interface here may show, a remote engine's among them.
   */
  engineGateways?: () => Promise<readonly string[]>;
}

/** The policy a dial made now applies. Throws when the host's own addresses cannot be read. */
export async function dialPolicy(options: HostDialOptions = {}): Promise<EgressAddressPolicy> {
  const [interfaces, gateways] = await Promise.all([
    hostInterfaceAddresses(),
    options.engineGateways?.() ?? Promise.resolve([]),
  ]);
  return { hostAddresses: [...interfaces, ...gateways], allowPrivate: options.allowPrivate ?? [] };
}

/** The real dial: resolve on the host, drop refused addresses, try the rest in order. */
export function hostDial(options: HostDialOptions = {}): EgressDial {
  const connectTimeoutMs = options.connectTimeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS;
  return async (host, port, signal) => {
    const found = isIP(host)
      ? [host]
      : (
          await lookup(host, { all: true }).catch((error: NodeJS.ErrnoException) => {
            throw new Error(`${host} does not resolve on the host (${error.code ?? error.message})`);
          })
        ).map((a) => a.address);
    const policy = await dialPolicy(options);
    const verdicts = found.map((address) => ({ address, why: addressRefusal(address, policy) }));
    const addresses = verdicts.filter((v) => v.why === undefined).map((v) => v.address);
    if (addresses.length === 0) {
      const reasons = verdicts.map((v) => `${v.address} is ${v.why}`).join("; ");
      throw new Error(
        isIP(host)
          ? `${reasons}; a box may not reach it`
          : `${host} resolves only to addresses a box may not reach: ${reasons}`,
      );
    }
    let last: Error | undefined;
    for (const address of addresses) {
      try {
        return await connectOnce(address, port, connectTimeoutMs, signal);
      } catch (error) {
        last = error as Error;
        if (signal.aborted) break;
      }
    }
    throw new Error(`could not connect to ${host}:${port} from the host (${last?.message ?? "aborted"})`);
  };
}

function connectOnce(address: string, port: number, timeoutMs: number, signal: AbortSignal): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: address, port, signal });
    const timer = setTimeout(() => socket.destroy(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs);
    socket.once("connect", () => {
      clearTimeout(timer);
      socket.removeListener("error", reject);
      resolve(socket);
    });
    socket.once("error", (error) => {
      clearTimeout(timer);
      reject(error);
    });
  });
}
