/**
 * How the egress proxy reaches an allowed host: it resolves the name on the host and connects
 * from there. A name that resolves to a loopback, link-local (the cloud metadata address among
 * them), unspecified or multicast address is refused: a wildcard pattern must not lead a box to
 * the host's own services. An IP literal the operator listed is dialled as it is.
 */
import { lookup } from "node:dns/promises";
import { BlockList, connect, isIP, type Socket } from "node:net";

/** Opens a TCP connection to an allowed target; rejects with a message fit for the box's user. */
export type EgressDial = (host: string, port: number, signal: AbortSignal) => Promise<Socket>;

const forbidden = new BlockList();
forbidden.addSubnet("0.0.0.0", 8, "ipv4");
forbidden.addSubnet("127.0.0.0", 8, "ipv4");
forbidden.addSubnet("169.254.0.0", 16, "ipv4");
forbidden.addSubnet("224.0.0.0", 4, "ipv4");
forbidden.addAddress("::", "ipv6");
forbidden.addAddress("::1", "ipv6");
forbidden.addSubnet("fe80::", 10, "ipv6");
forbidden.addSubnet("ff00::", 8, "ipv6");

/** Whether a resolved address is one a host name may not lead to (see the module comment). */
export function forbiddenAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 0) return true;
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address)?.[1];
  if (mapped) return forbidden.check(mapped, "ipv4");
  return forbidden.check(address, family === 4 ? "ipv4" : "ipv6");
}

export const DEFAULT_CONNECT_TIMEOUT_MS = 15_000;

/** The real dial: resolve on the host, drop forbidden addresses, try the rest in order. */
export function hostDial(connectTimeoutMs = DEFAULT_CONNECT_TIMEOUT_MS): EgressDial {
  return async (host, port, signal) => {
    let addresses: string[];
    if (isIP(host)) {
      addresses = [host];
    } else {
      const found = await lookup(host, { all: true }).catch((error: NodeJS.ErrnoException) => {
        throw new Error(`${host} does not resolve on the host (${error.code ?? error.message})`);
      });
      addresses = found.map((a) => a.address).filter((a) => !forbiddenAddress(a));
      if (addresses.length === 0) {
        throw new Error(
          `${host} resolves only to loopback, link-local or other local addresses (${found.map((a) => a.address).join(", ")}), which a box may not reach`,
        );
      }
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
