/**
 * Every address assigned to any of the host's interfaces, whatever the interface's state.
 *
 * Node's `os.networkInterfaces()` is libuv's list, which leaves out every interface that is not
 * both up and running: docker0 with no container attached (up, no carrier), a bridge whose last
 * box went away, any interface set down. Their addresses are still the host's: an interface comes
 * back up when a container starts, and an address the egress check did not know as the host's
 * would be opened by a range (`--egress-allow-private 172.16.0.0/12` opened 172.17.0.1). So on
 * Linux the list is the kernel's own, asked over netlink by iproute2 (`ip -json address show`:
 * every address of every interface, in every state), joined with Node's. A host where that cannot
 * be read refuses the dial (fail closed) with what to install, rather than check against less.
 * Other systems have only Node's list.
 */
import { execFile } from "node:child_process";
import { networkInterfaces } from "node:os";
import { promisify } from "node:util";

const run = promisify(execFile);

/** Where iproute2's `ip` is on Linux distributions, tried in order before PATH. */
const IP_PROGRAMS = ["/usr/sbin/ip", "/sbin/ip", "/usr/bin/ip", "/bin/ip", "ip"];

interface IpAddressInfo {
  local?: unknown;
  address?: unknown;
}

/** The addresses in `ip -json address show` output: each address's own (`local`) and its peer's. */
export function parseIpAddressJson(text: string): string[] {
  const links = JSON.parse(text) as { addr_info?: IpAddressInfo[] }[];
  if (!Array.isArray(links)) throw new Error("not a list of interfaces");
  return links.flatMap((link) =>
    (link.addr_info ?? []).flatMap((a) =>
      [a.local, a.address].filter((v): v is string => typeof v === "string" && v !== ""),
    ),
  );
}

/** What libuv lists: the addresses of interfaces that are up and running. */
export function runningInterfaceAddresses(): string[] {
  return Object.values(networkInterfaces())
    .flat()
    .flatMap((a) => (a ? [a.address] : []));
}

/**
 * Every address of the host's interfaces now, in any state. Throws, naming iproute2, when Linux's
 * list cannot be read.
 */
export async function hostInterfaceAddresses(
  platform: NodeJS.Platform = process.platform,
): Promise<string[]> {
  const running = runningInterfaceAddresses();
  if (platform !== "linux") return running;
  let last: Error | undefined;
  for (const program of IP_PROGRAMS) {
    try {
      const { stdout } = await run(program, ["-json", "address", "show"], { maxBuffer: 16 * 1024 * 1024 });
      return [...new Set([...parseIpAddressJson(stdout), ...running])];
    } catch (error) {
      last = error as Error;
      if ((error as NodeJS.ErrnoException).code !== "ENOENT") break;
    }
  }
  throw new Error(
    `cannot list the host's own addresses (\`ip -json address show\`: ${last?.message ?? "not found"}); install iproute2 so that drydock can tell them from the addresses a box may reach`,
  );
}
