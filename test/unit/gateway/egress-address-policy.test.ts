import { describe, expect, it } from "vitest";
import {
  addressRefusal,
  embeddedIpv4,
  parseAddressRanges,
  type EgressAddressPolicy,
} from "../../../src/gateway/egress-address-policy.js";

const none: EgressAddressPolicy = { hostAddresses: [], allowPrivate: [] };
const opened = (...values: string[]): EgressAddressPolicy => ({
  hostAddresses: ["192.0.2.2", "172.17.0.1", "fd00::2"],
  allowPrivate: parseAddressRanges(values, "--egress-allow-private"),
});

describe("addressRefusal", () => {
  it("refuses every local, private, shared, multicast and reserved IPv4 range", () => {
    const cases: Array<[string, RegExp]> = [
      ["0.0.0.0", /^unspecified/],
      ["0.1.2.3", /^unspecified/],
      ["10.0.0.5", /^private \(RFC 1918\)/],
      ["10.255.255.255", /^private/],
      ["172.16.0.1", /^private/],
      ["172.17.0.1", /^private/],
      ["172.31.255.254", /^private/],
      ["192.168.1.1", /^private/],
      ["100.64.0.1", /^shared address space \(CGNAT\)/],
      ["100.127.255.254", /^shared/],
      ["127.0.0.1", /^loopback/],
      ["127.8.9.10", /^loopback/],
      ["169.254.169.254", /^link-local/],
      ["192.0.0.170", /^reserved/],
      ["198.18.0.1", /^reserved \(benchmarking/],
      ["224.0.0.1", /^multicast/],
      ["239.255.255.250", /^multicast/],
      ["240.0.0.1", /^reserved/],
      ["255.255.255.255", /^reserved \(broadcast/],
    ];
    for (const [address, why] of cases) expect(addressRefusal(address, none), address).toMatch(why);
  });

  it("lets public addresses through, the edges of refused ranges included", () => {
    for (const address of [
      "151.101.0.223",
      "8.8.8.8",
      "11.0.0.1",
      "172.15.255.255",
      "172.32.0.1",
      "100.63.255.255",
      "100.128.0.1",
      "192.169.0.1",
      "223.255.255.255",
      "2606:4700:4700::1111",
      "2a04:4e42::223",
    ]) {
      expect(addressRefusal(address, none), address).toBeUndefined();
    }
  });

  it("refuses IPv6 loopback, unspecified, unique local, link-local, multicast and reserved", () => {
    const cases: Array<[string, RegExp]> = [
      ["::", /^unspecified/],
      ["::1", /^loopback/],
      ["fc00::1", /^unique local/],
      ["fd00::2", /^unique local/],
      ["fd00:ec2::254", /^unique local/],
      ["fe80::1", /^link-local/],
      ["fe80::1%eth0", /^a scoped link-local/],
      ["ff02::1", /^multicast/],
      ["2001::1", /^reserved \(IETF protocol assignments, Teredo\)/],
      ["2002:a00:1::1", /^reserved \(6to4\)/],
      ["100::1", /^reserved \(outside global unicast\)/],
      ["::10.0.0.1", /^reserved \(outside global unicast\)/],
      ["64:ff9b:1::a00:1", /^reserved/],
      ["5f00::1", /^reserved/],
      ["fec0::1", /^reserved/],
    ];
    for (const [address, why] of cases) expect(addressRefusal(address, none), address).toMatch(why);
  });

  it("judges an IPv6 form that carries an IPv4 address by that address", () => {
    for (const address of [
      "::ffff:127.0.0.1",
      "::ffff:7f00:1",
      "::FFFF:10.0.0.5",
      "0:0:0:0:0:ffff:a9fe:a9fe",
      "::ffff:172.17.0.1",
      "::ffff:192.168.0.1",
      "::ffff:100.64.0.1",
      "::ffff:0.0.0.0",
      "::ffff:224.0.0.1",
      "64:ff9b::10.0.0.5",
      "64:ff9b::7f00:1",
    ]) {
      expect(addressRefusal(address, none), address).toMatch(
        /^an IPv6 form of \d+\.\d+\.\d+\.\d+, which is /,
      );
    }
    expect(addressRefusal("::ffff:10.0.0.5", none)).toMatch(/^an IPv6 form of 10\.0\.0\.5, which is private/);
    expect(addressRefusal("::ffff:151.101.0.223", none)).toBeUndefined();
    expect(addressRefusal("64:ff9b::8.8.8.8", none)).toBeUndefined();
    expect(embeddedIpv4("::ffff:a9fe:a9fe")).toBe("169.254.169.254");
    expect(embeddedIpv4("2606:4700::1")).toBeUndefined();
  });

  it("refuses the host's own addresses in any range, and in their mapped forms", () => {
    const policy: EgressAddressPolicy = {
      hostAddresses: ["192.0.2.2", "203.0.113.9", "2a01:4f8::5", "fe80::1%eth0"],
      allowPrivate: [],
    };
    expect(addressRefusal("192.0.2.2", policy)).toMatch(/^an address of this host/);
    expect(addressRefusal("203.0.113.9", policy)).toMatch(/^an address of this host/);
    expect(addressRefusal("::ffff:203.0.113.9", policy)).toMatch(
      /^an IPv6 form of 203\.0\.113\.9, which is an address of this host/,
    );
    expect(addressRefusal("2a01:4f8:0::5", policy)).toMatch(/^an address of this host/);
    // Documentation ranges are not refused as such: only the host's own addresses among them.
    expect(addressRefusal("192.0.2.3", policy)).toBeUndefined();
    expect(addressRefusal("203.0.113.80", policy)).toBeUndefined();
  });

  it("opens what the operator names, and the host itself only to an exception naming the one address", () => {
    const wide = opened("10.20.0.0/16,172.16.0.0/12", "fd00::/8");
    expect(addressRefusal("10.20.3.4", wide)).toBeUndefined();
    expect(addressRefusal("::ffff:10.20.3.4", wide)).toBeUndefined();
    expect(addressRefusal("10.21.0.1", wide)).toMatch(
      /^private .*--egress-allow-private 10\.0\.0\.0\/8, or 10\.21\.0\.1 alone/,
    );
    expect(addressRefusal("172.20.5.5", wide)).toBeUndefined();
    expect(addressRefusal("fd00::5", wide)).toBeUndefined();
    // The bridge gateway and the host's ULA lie inside the opened ranges, but are the host's own.
    expect(addressRefusal("172.17.0.1", wide)).toBe(
      "an address of this host (open it with --egress-allow-private 172.17.0.1)",
    );
    expect(addressRefusal("fd00::2", wide)).toMatch(/^an address of this host/);
    expect(addressRefusal("192.0.2.2", wide)).toMatch(/^an address of this host/);
    // Loopback and unspecified are the host too: a range does not open them.
    expect(addressRefusal("127.0.0.1", opened("127.0.0.0/8"))).toMatch(
      /^loopback .*--egress-allow-private 127\.0\.0\.1\)/,
    );
    expect(addressRefusal("127.0.0.1", opened("127.0.0.1"))).toBeUndefined();
    const named = opened("172.17.0.1", "fd00::2/128", "192.0.2.2/32");
    expect(addressRefusal("172.17.0.1", named)).toBeUndefined();
    expect(addressRefusal("::ffff:172.17.0.1", named)).toBeUndefined();
    expect(addressRefusal("fd00:0::2", named)).toBeUndefined();
    expect(addressRefusal("192.0.2.2", named)).toBeUndefined();
    expect(addressRefusal("172.17.0.2", named)).toMatch(/^private/);
  });

  it("refuses what is not an address", () => {
    expect(addressRefusal("localhost", none)).toBe("not an IP address");
    expect(addressRefusal("", none)).toBe("not an IP address");
  });
});

describe("parseAddressRanges", () => {
  it("takes addresses and CIDR ranges, comma-separated or repeated, in canonical form", () => {
    expect(parseAddressRanges(["10.20.0.0/16, 172.17.0.1", "[FD00::0:1]", "fd00::/8"], "--f")).toEqual([
      { address: "10.20.0.0", prefix: 16, family: "ipv4" },
      { address: "172.17.0.1", prefix: 32, family: "ipv4" },
      { address: "fd00::1", prefix: 128, family: "ipv6" },
      { address: "fd00::", prefix: 8, family: "ipv6" },
    ]);
  });

  it("refuses names, bad prefixes and mapped forms, naming the flag and the entry", () => {
    const flag = "--egress-allow-private";
    expect(() => parseAddressRanges(["intranet.example"], flag)).toThrow(
      /--egress-allow-private: "intranet.example" is not an IP address or a CIDR range; e\.g\. --egress-allow-private 10\.20\.0\.0\/16/,
    );
    expect(() => parseAddressRanges(["10.0.0.0/33"], flag)).toThrow(/prefix length outside 0 to 32/);
    expect(() => parseAddressRanges(["10.0.0.0/x"], flag)).toThrow(/prefix length outside/);
    expect(() => parseAddressRanges(["10.0.0.0/8/8"], flag)).toThrow(/not an IP address or a CIDR range/);
    expect(() => parseAddressRanges(["::ffff:10.0.0.1"], flag)).toThrow(/give the IPv4 form/);
    expect(() => parseAddressRanges([""], flag)).toThrow(/an empty entry/);
  });
});
