import { describe, expect, it } from "vitest";
import { DEFAULT_LIMITS } from "../../../src/sandbox/box-profile.js";
import { poolMisfit, poolProfile } from "../../../src/session/pool-fit.js";

describe("poolMisfit", () => {
  const profile = poolProfile("img:1");

  it("fits a session on the defaults, stated or not", () => {
    expect(poolMisfit(profile, { image: "img:1" })).toBeUndefined();
    expect(
      poolMisfit(profile, { image: "img:1", network: "none", memoryMB: DEFAULT_LIMITS.memoryMB }),
    ).toBeUndefined();
    expect(poolMisfit(profile, { image: "img:1", env: {}, labels: {}, capAdd: [] })).toBeUndefined();
  });

  it("names what the pool cannot serve", () => {
    expect(poolMisfit(profile, { image: "img:2" })).toMatch(/image/);
    expect(poolMisfit(profile, { image: "img:1", network: "bridge" })).toMatch(/network/);
    expect(poolMisfit(profile, { image: "img:1", memoryMB: 512 })).toMatch(/memoryMB/);
    expect(poolMisfit(profile, { image: "img:1", cpus: 2 })).toMatch(/cpus/);
    expect(poolMisfit(profile, { image: "img:1", pidsLimit: 64 })).toMatch(/pidsLimit/);
    expect(poolMisfit(profile, { image: "img:1", workspaceMB: 64 })).toMatch(/workspaceMB/);
    expect(poolMisfit(profile, { image: "img:1", writableRootfs: true })).toMatch(/writableRootfs/);
    expect(poolMisfit(profile, { image: "img:1", allowNewPrivileges: true })).toMatch(/allowNewPrivileges/);
    expect(poolMisfit(profile, { image: "img:1", capAdd: ["CHOWN"] })).toMatch(/capAdd/);
    expect(poolMisfit(profile, { image: "img:1", egress: ["pypi.org"] })).toMatch(/egress/);
    expect(poolMisfit(profile, { image: "img:1", env: { A: "1" } })).toMatch(/env/);
    expect(poolMisfit(profile, { image: "img:1", labels: { a: "b" } })).toMatch(/labels/);
  });

  it("serves the server's own defaults when the pool is made from them", () => {
    const server = poolProfile("img:1", { memoryMB: 4096, cpus: 2 });
    expect(poolMisfit(server, { image: "img:1", memoryMB: 4096, cpus: 2 })).toBeUndefined();
    expect(poolMisfit(server, { image: "img:1" })).toMatch(/memoryMB/);
    // Boxes with egress carry the proxy's environment: they serve sessions with the same allowlist only.
    const egress = poolProfile("img:1", { egress: ["pypi.org", "files.pythonhosted.org"] });
    expect(
      poolMisfit(egress, { image: "img:1", egress: ["files.pythonhosted.org", "pypi.org"] }),
    ).toBeUndefined();
    expect(poolMisfit(egress, { image: "img:1", egress: [] })).toMatch(/egress/);
    expect(poolMisfit(egress, { image: "img:1" })).toMatch(/egress/);
    expect(poolMisfit(egress, { image: "img:1", egress: ["pypi.org"] })).toMatch(/egress/);
  });
});
