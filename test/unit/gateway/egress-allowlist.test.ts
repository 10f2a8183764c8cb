import { describe, expect, it } from "vitest";
import {
  canonicalHost,
  egressBeyondGrant,
  egressDecision,
  parseConnectTarget,
  parseEgressEntries,
  parseEgressFlag,
} from "../../../src/gateway/egress-allowlist.js";
import { EGRESS_SETS } from "../../../src/gateway/egress-sets.js";

describe("parseEgressFlag", () => {
  it("expands named sets and keeps hosts, patterns and IP literals in canonical form", () => {
    expect(parseEgressFlag("pypi")).toEqual(["pypi.org", "files.pythonhosted.org"]);
    expect(
      parseEgressFlag(["pypi,npm", " Example.COM. ", "*.Corp.Example.com", "10.0.0.5", "[2001:DB8::1]"]),
    ).toEqual([
      "pypi.org",
      "files.pythonhosted.org",
      "registry.npmjs.org",
      "example.com",
      "*.corp.example.com",
      "10.0.0.5",
      "2001:db8::1",
    ]);
    expect(parseEgressFlag("GitHub")).toEqual(EGRESS_SETS.github);
  });

  it("drops duplicates and accepts an explicit :443", () => {
    expect(parseEgressFlag("pypi.org,pypi,pypi.org:443,[::1]:443")).toEqual([
      "pypi.org",
      "files.pythonhosted.org",
      "::1",
    ]);
  });

  it("names the flag and the value it refuses, with an example of what works", () => {
    const cases: Array<[string, RegExp]> = [
      ["pypi,,npm", /^--egress: an empty entry .*; e\.g\. --egress pypi,files\.example\.com$/],
      ["https://pypi.org/simple", /^--egress: "https:\/\/pypi\.org\/simple" looks like a URL/],
      ["pypi.org:80", /^--egress: "pypi\.org:80" names port 80, but only port 443/],
      ["*", /^--egress: "\*" is not a pattern/],
      ["*.com", /^--egress: "\*\.com" is too broad/],
      ["*.10.0.0.1", /^--egress: "\*\.10\.0\.0\.1" is not a pattern/],
      ["a.*.example.com", /^--egress: "a\.\*\.example\.com" is not a pattern/],
      [
        "bad host",
        /^--egress: "bad host" is not a host name, .*named set \(pypi, npm, debian, crates, go, github\)/,
      ],
      ["exa_mple..com", /is not a host name/],
      ["-lead.example.com", /is not a host name/],
      ["999.1.1.1", /is not a host name/],
      ["user@example.com", /is not a host name/],
    ];
    for (const [value, message] of cases) expect(() => parseEgressFlag(value), value).toThrow(message);
  });

  it("names a tool's parameter with a JSON example", () => {
    expect(() => parseEgressEntries(["nope!"], "egress")).toThrow(
      /^egress: "nope!" is not a host name.*; e\.g\. \["pypi", "files\.example\.com"\]$/,
    );
  });
});

describe("canonicalHost", () => {
  it("folds case and the trailing dot, and gives numeric IPv4 forms their dotted form", () => {
    expect(canonicalHost("PyPI.org.")).toBe("pypi.org");
    expect(canonicalHost("2130706433")).toBe("127.0.0.1");
    expect(canonicalHost("0x7f.1")).toBe("127.0.0.1");
    expect(canonicalHost("[::FFFF:127.0.0.1]")).toBe("::ffff:7f00:1");
    expect(canonicalHost("example.com..")).toBeUndefined();
    expect(canonicalHost("exämple.com")).toBeUndefined();
    expect(canonicalHost("")).toBeUndefined();
  });
});

describe("egressDecision", () => {
  const rules = parseEgressFlag("pypi,*.example.com,10.0.0.5");
  const decide = (authority: string) => {
    const target = parseConnectTarget(authority);
    if (!target) return "unparsable";
    const decision = egressDecision(rules, target);
    return decision.allowed ? "allowed" : decision.why;
  };

  it("allows listed hosts on port 443 only", () => {
    expect(decide("pypi.org:443")).toBe("allowed");
    expect(decide("files.pythonhosted.org:443")).toBe("allowed");
    expect(decide("pypi.org:80")).toMatch(/only HTTPS on port 443 .* not port 80/);
    expect(decide("pypi.org:8443")).toMatch(/not port 8443/);
  });

  it("ignores case and a trailing dot in the target", () => {
    expect(decide("PYPI.ORG.:443")).toBe("allowed");
    expect(decide("Files.PythonHosted.Org:443")).toBe("allowed");
  });

  it("matches a pattern's subdomains at any depth, never the bare domain or a lookalike", () => {
    expect(decide("a.example.com:443")).toBe("allowed");
    expect(decide("a.b.example.com:443")).toBe("allowed");
    expect(decide("example.com:443")).toMatch(/example\.com is not in this session's egress allowlist/);
    expect(decide("badexample.com:443")).toMatch(/not in/);
    expect(decide("example.com.evil.net:443")).toMatch(/not in/);
  });

  it("reaches an IP literal only when it is listed, in whatever form it is written", () => {
    expect(decide("10.0.0.5:443")).toBe("allowed");
    expect(decide("167772165:443")).toBe("allowed");
    expect(decide("10.0.0.6:443")).toMatch(/IP address is reachable only when listed/);
    expect(decide("127.0.0.1:443")).toMatch(/only when listed/);
    expect(decide("2130706433:443")).toMatch(/127\.0\.0\.1 is not in/);
    expect(decide("[::1]:443")).toMatch(/only when listed/);
    expect(egressDecision(parseEgressFlag("[::1]"), parseConnectTarget("[0:0::1]:443")!)).toEqual({
      allowed: true,
    });
  });

  it("refuses everything with an empty list, and unparsable targets are no target", () => {
    expect(egressDecision([], { host: "pypi.org", port: 443 })).toMatchObject({
      allowed: false,
      why: /empty/,
    });
    for (const bad of [
      "pypi.org",
      "pypi.org:",
      "pypi.org:99999",
      "pypi.org:0",
      "a b:443",
      "[::1:443",
      "user@x:443",
    ]) {
      expect(parseConnectTarget(bad), bad).toBeUndefined();
    }
  });
});

describe("egressBeyondGrant", () => {
  const granted = parseEgressFlag("pypi,*.example.com,10.0.0.5");

  it("lets a request narrow the grant", () => {
    expect(
      egressBeyondGrant(granted, parseEgressFlag("pypi.org,a.example.com,*.b.example.com,*.example.com")),
    ).toEqual([]);
    expect(egressBeyondGrant(granted, [])).toEqual([]);
  });

  it("names what would widen it", () => {
    expect(egressBeyondGrant(granted, parseEgressFlag("npm,example.com,*.com.example,10.0.0.6"))).toEqual([
      "registry.npmjs.org",
      "example.com",
      "*.com.example",
      "10.0.0.6",
    ]);
    expect(egressBeyondGrant([], ["pypi.org"])).toEqual(["pypi.org"]);
    expect(egressBeyondGrant(["a.example.com"], ["*.example.com"])).toEqual(["*.example.com"]);
  });
});
