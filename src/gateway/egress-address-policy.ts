/**
 * Which addresses an allowed host may lead the egress proxy to. A host name is chosen by the
 * operator, but what it resolves to is chosen by whoever controls its DNS (and `*.domain` patterns
 * hand that to anyone with a name under the domain): the answer must not lead a box to the host's
 * own services or to the networks behind it. So the host's own addresses (every interface, every
 * container bridge's gateway), loopback, private (RFC 1918), shared (CGNAT), link-local, unique
 * local, unspecified, multicast, broadcast and reserved ranges are refused, in IPv4, in IPv6, and in
 * IPv6 forms that carry an IPv4 address (mapped `::ffff:a.b.c.d`, NAT64 `64:ff9b::a.b.c.d`, 6to4).
 *
 * The operator can open a range (`--egress-allow-private 10.20.0.0/16`); the host itself opens
 * only to an exception that names the one address, so opening a private network for an internal
 * registry never opens the container bridge's gateway inside it.
 *
 * Documentation ranges (192.0.2.0/24, 198.51.100.0/24, 203.0.113.0/24, 2001:db8::/32) are not
 * refused: nothing routes them, and closed test networks use them as their stand-in internet; a
 * host address among them is refused as the host's. Pure.
 */
import { BlockList, isIP } from "node:net";
import { InvalidArgumentError } from "../util/errors.js";

/** A range the operator opened: an address and a prefix length, in canonical text. */
export interface AddressRange {
  address: string;
  prefix: number;
  family: "ipv4" | "ipv6";
}

export interface EgressAddressPolicy {
  /** The host's own addresses: its interfaces' now, and container bridges' gateways. */
  hostAddresses: readonly string[];
  /** Ranges the operator opened (`--egress-allow-private`). */
  allowPrivate: readonly AddressRange[];
}

interface RefusedRange {
  address: string;
  prefix: number;
  family: "ipv4" | "ipv6";
  /** What the range is, as a refusal says it. */
  what: string;
  /** Leads to the host itself: opened only by an exception naming the one address. */
  host?: boolean;
}

const REFUSED: readonly RefusedRange[] = [
  { address: "0.0.0.0", prefix: 8, family: "ipv4", what: "unspecified (this host)", host: true },
  { address: "10.0.0.0", prefix: 8, family: "ipv4", what: "private (RFC 1918)" },
  { address: "100.64.0.0", prefix: 10, family: "ipv4", what: "shared address space (CGNAT)" },
  { address: "127.0.0.0", prefix: 8, family: "ipv4", what: "loopback", host: true },
  { address: "169.254.0.0", prefix: 16, family: "ipv4", what: "link-local (cloud metadata among it)" },
  { address: "172.16.0.0", prefix: 12, family: "ipv4", what: "private (RFC 1918)" },
  { address: "192.0.0.0", prefix: 24, family: "ipv4", what: "reserved (IETF protocol assignments)" },
  { address: "192.88.99.0", prefix: 24, family: "ipv4", what: "reserved (6to4 relay)" },
  { address: "192.168.0.0", prefix: 16, family: "ipv4", what: "private (RFC 1918)" },
  { address: "198.18.0.0", prefix: 15, family: "ipv4", what: "reserved (benchmarking networks)" },
  { address: "224.0.0.0", prefix: 4, family: "ipv4", what: "multicast" },
  { address: "240.0.0.0", prefix: 4, family: "ipv4", what: "reserved (broadcast among it)" },
  { address: "::", prefix: 128, family: "ipv6", what: "unspecified (this host)", host: true },
  { address: "::1", prefix: 128, family: "ipv6", what: "loopback", host: true },
  { address: "2001::", prefix: 23, family: "ipv6", what: "reserved (IETF protocol assignments, Teredo)" },
  { address: "2002::", prefix: 16, family: "ipv6", what: "reserved (6to4)" },
  { address: "fc00::", prefix: 7, family: "ipv6", what: "unique local (ULA)" },
  { address: "fe80::", prefix: 10, family: "ipv6", what: "link-local" },
  { address: "ff00::", prefix: 8, family: "ipv6", what: "multicast" },
  // Everything outside global unicast (2000::/3) not named above: unassigned or reserved.
  { address: "::", prefix: 3, family: "ipv6", what: "reserved (outside global unicast)" },
  { address: "4000::", prefix: 2, family: "ipv6", what: "reserved (outside global unicast)" },
  { address: "8000::", prefix: 1, family: "ipv6", what: "reserved (outside global unicast)" },
];

/** Each refused range in a BlockList of its own, so a hit can say which range it was. */
const REFUSED_LISTS = REFUSED.map((range) => {
  const list = new BlockList();
  list.addSubnet(range.address, range.prefix, range.family);
  return { range, list };
});

/** IPv6 prefixes whose last 32 bits are an IPv4 address the connection ends up at. */
const CARRIES_IPV4 = new BlockList();
CARRIES_IPV4.addSubnet("::ffff:0:0", 96, "ipv6");
CARRIES_IPV4.addSubnet("64:ff9b::", 96, "ipv6");

/** The eight 16-bit groups of an IPv6 address, from its canonical (URL) form. */
function ipv6Groups(address: string): number[] {
  const canonical = new URL(`http://[${address}]/`).hostname.slice(1, -1);
  const [head = "", tail] = canonical.split("::");
  const part = (text: string) => (text ? text.split(":").map((g) => parseInt(g, 16)) : []);
  const left = part(head);
  const right = tail === undefined ? [] : part(tail);
  return [...left, ...Array<number>(8 - left.length - right.length).fill(0), ...right];
}

/** The IPv4 address an IPv6 address carries (mapped or NAT64), or undefined. */
export function embeddedIpv4(address: string): string | undefined {
  if (isIP(address) !== 6 || !CARRIES_IPV4.check(address, "ipv6")) return undefined;
  const groups = ipv6Groups(address);
  const high = groups[6] ?? 0;
  const low = groups[7] ?? 0;
  return [high >> 8, high & 0xff, low >> 8, low & 0xff].join(".");
}

const familyOf = (address: string): "ipv4" | "ipv6" => (isIP(address) === 4 ? "ipv4" : "ipv6");

function inRange(address: string, range: AddressRange): boolean {
  if (familyOf(address) !== range.family) return false;
  const list = new BlockList();
  list.addSubnet(range.address, range.prefix, range.family);
  return list.check(address, range.family);
}

/** Whether `range` is exactly the one address `address`. */
function namesAlone(range: AddressRange, address: string): boolean {
  const full = range.family === "ipv4" ? 32 : 128;
  return range.prefix === full && inRange(address, range);
}

/**
 * Why a box may not be led to `address`, or undefined when it may. The reason reads after the
 * address: `10.0.0.5 is private (RFC 1918) …`.
 */
export function addressRefusal(address: string, policy: EgressAddressPolicy): string | undefined {
  const family = isIP(address);
  if (family === 0) return "not an IP address";
  // Only link-local IPv6 addresses carry a zone (fe80::1%eth0).
  if (address.includes("%")) return "a scoped link-local address";
  const carried = embeddedIpv4(address);
  if (carried !== undefined) {
    const why = addressRefusal(carried, policy);
    return why === undefined ? undefined : `an IPv6 form of ${carried}, which is ${why}`;
  }
  const opened = (host: boolean) =>
    policy.allowPrivate.some((range) => (host ? namesAlone(range, address) : inRange(address, range)));
  const own = new BlockList();
  for (const a of policy.hostAddresses) {
    const unscoped = a.split("%")[0] ?? "";
    const hostAddress = embeddedIpv4(unscoped) ?? unscoped;
    if (isIP(hostAddress)) own.addAddress(hostAddress, familyOf(hostAddress));
  }
  const hit = REFUSED_LISTS.find(({ list, range }) => list.check(address, range.family))?.range;
  if (own.check(address, familyOf(address)) || hit?.host) {
    if (opened(true)) return undefined;
    const what = hit?.host ? hit.what : "an address of this host";
    return `${what} (open it with --egress-allow-private ${address})`;
  }
  if (!hit || opened(false)) return undefined;
  return `${hit.what} (open it with --egress-allow-private ${hit.address}/${hit.prefix}, or ${address} alone)`;
}

/**
 * Parses `--egress-allow-private` values (each `address` or `address/prefix`, comma-separated)
 * into ranges. Throws `InvalidArgumentError` naming `field` and the entry.
 */
export function parseAddressRanges(values: readonly string[], field: string): AddressRange[] {
  const ranges: AddressRange[] = [];
  for (const raw of values.flatMap((v) => v.split(","))) {
    const entry = raw.trim();
    const refuse = (problem: string) =>
      new InvalidArgumentError(field, `${problem}; e.g. ${field} 10.20.0.0/16 or ${field} 172.17.0.1`);
    if (!entry) throw refuse("an empty entry (give addresses or CIDR ranges separated by commas)");
    const [text = "", prefixText, ...rest] = entry.split("/");
    const address = text.startsWith("[") && text.endsWith("]") ? text.slice(1, -1) : text;
    const family = isIP(address);
    if (family === 0 || rest.length > 0) {
      throw refuse(`${JSON.stringify(entry)} is not an IP address or a CIDR range`);
    }
    const full = family === 4 ? 32 : 128;
    const prefix = prefixText === undefined ? full : Number(prefixText);
    if (!/^\d{1,3}$/.test(prefixText ?? String(full)) || prefix > full) {
      throw refuse(`${JSON.stringify(entry)} has a prefix length outside 0 to ${full}`);
    }
    if (embeddedIpv4(address) !== undefined) {
      throw refuse(`${JSON.stringify(entry)} is an IPv6 form of an IPv4 address; give the IPv4 form`);
    }
    const canonical = family === 4 ? address : new URL(`http://[${address}]/`).hostname.slice(1, -1);
    ranges.push({ address: canonical, prefix, family: family === 4 ? "ipv4" : "ipv6" });
  }
  return ranges;
}

/** A range as people write it: `10.20.0.0/16`. */
export function rangeText(range: AddressRange): string {
  return `${range.address}/${range.prefix}`;
}
