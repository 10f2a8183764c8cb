import { describe, expect, it } from "vitest";
import { parseEgressFlag } from "../../../src/gateway/egress-allowlist.js";
import { boxSpec, relaxations } from "../../../src/sandbox/box-profile.js";
import { assertWithinGrants } from "../../../src/server/session-request-policy.js";

describe("a box's egress in its profile", () => {
  it("gives a box without egress no proxy, no CA bundle and a noexec home", () => {
    for (const egress of [undefined, []]) {
      const spec = boxSpec({ image: "img", egress });
      expect(Object.keys(spec.env).filter((k) => /proxy|CERT|CA_|PIP/i.test(k))).toEqual([]);
      expect(spec.tmpfs.find((t) => t.path === "/home/agent")?.exec).toBe(false);
      expect(relaxations({ image: "img", egress })).toEqual([]);
    }
  });

  it("points a box with egress at the relay and the bundle in /run/drydock, and logs it as a relaxation", () => {
    const egress = parseEgressFlag("pypi");
    const spec = boxSpec({ image: "img", egress, env: { HTTPS_PROXY: "caller wins" } });
    expect(spec.env).toMatchObject({
      HTTPS_PROXY: "caller wins",
      https_proxy: "http://127.0.0.1:47012",
      HTTP_PROXY: "http://127.0.0.1:47012",
      NO_PROXY: "localhost,127.0.0.1,::1",
      SSL_CERT_FILE: "/run/drydock/ca-certificates.crt",
      REQUESTS_CA_BUNDLE: "/run/drydock/ca-certificates.crt",
      PIP_CERT: "/run/drydock/ca-certificates.crt",
      NODE_EXTRA_CA_CERTS: "/run/drydock/ca-certificates.crt",
      CURL_CA_BUNDLE: "/run/drydock/ca-certificates.crt",
      GIT_SSL_CAINFO: "/run/drydock/ca-certificates.crt",
      PIP_USER: "1",
    });
    expect(spec.tmpfs.find((t) => t.path === "/home/agent")?.exec).toBe(true);
    expect(spec.network).toBe("none");
    expect(relaxations({ image: "img", egress })).toEqual([
      expect.stringMatching(
        /^egress over HTTPS to pypi\.org, files\.pythonhosted\.org through the host's proxy/,
      ),
    ]);
  });
});

describe("session_create's egress against the operator's grant (pure)", () => {
  it("lets a client narrow the grant or drop it", () => {
    const grants = { egress: parseEgressFlag("pypi,*.example.com") };
    expect(() => assertWithinGrants({ egress: ["pypi.org"] }, grants)).not.toThrow();
    expect(() => assertWithinGrants({ egress: ["a.example.com", "*.b.example.com"] }, grants)).not.toThrow();
    expect(() => assertWithinGrants({ egress: [] }, grants)).not.toThrow();
    expect(() => assertWithinGrants({ egress: [] }, {})).not.toThrow();
    expect(() => assertWithinGrants({}, grants)).not.toThrow();
  });

  it("refuses what the operator did not grant, naming the field, the hosts and the flag", () => {
    expect(() => assertWithinGrants({ egress: ["pypi.org"] }, {})).toThrow(
      /^egress: pypi\.org is beyond the hosts this server lets boxes reach \(allowed: none\); .*drydock serve --egress HOST$/,
    );
    expect(() =>
      assertWithinGrants(
        { egress: ["pypi.org", "example.com", "evil.net"] },
        { egress: parseEgressFlag("pypi,*.example.com") },
      ),
    ).toThrow(
      /^egress: example\.com, evil\.net are beyond .*\(allowed: pypi\.org, files\.pythonhosted\.org, \*\.example\.com\)/,
    );
  });
});
