import { describe, expect, it } from "vitest";
import { collectAllowHost } from "../../../src/cli/allow-host-flag.js";
import { allowedHosts, hostAllowed } from "../../../src/server/http-guard.js";

describe("serve --allow-host", () => {
  it("takes whole HOST:PORT names, lower-cased, one per flag", () => {
    let hosts = collectAllowHost("drydock.drydock.svc:8765");
    hosts = collectAllowHost("Drydock.Example.COM:443", hosts);
    hosts = collectAllowHost("[fd00::5]:8765", hosts);
    expect(hosts).toEqual(["drydock.drydock.svc:8765", "drydock.example.com:443", "[fd00::5]:8765"]);
  });

  it("refuses patterns, bare hosts, URLs and bad ports, naming the flag and the form", () => {
    for (const bad of [
      "*.svc:8765",
      "drydock.svc",
      "http://drydock.svc:8765",
      "drydock.svc:0",
      "drydock.svc:70000",
      "drydock .svc:8765",
      "drydock.svc:8765/mcp",
      ":8765",
      "-x.svc:1",
    ]) {
      expect(() => collectAllowHost(bad), bad).toThrow(/--allow-host: .* is not HOST:PORT/);
    }
  });

  it("adds exactly those names to what the Host check accepts", () => {
    const hosts = allowedHosts("0.0.0.0", 8765, collectAllowHost("drydock.drydock.svc:8765"));
    expect(hostAllowed("drydock.drydock.svc:8765", hosts)).toBe(true);
    expect(hostAllowed("DRYDOCK.drydock.svc:8765", hosts)).toBe(true);
    expect(hostAllowed("drydock.drydock.svc:8766", hosts)).toBe(false);
    expect(hostAllowed("drydock.drydock.svc.evil.example:8765", hosts)).toBe(false);
    expect(hostAllowed("127.0.0.1:8765", hosts)).toBe(false);
  });
});
