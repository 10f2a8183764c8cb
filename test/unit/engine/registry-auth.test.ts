import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { authFromConfig, registryAuth } from "../../../src/engine/registry-auth.js";

const basic = (user: string, pass: string) => Buffer.from(`${user}:${pass}`).toString("base64");

describe("registry credentials from the client configuration", () => {
  it("reads `auths` under the keys docker login writes", () => {
    const config = {
      auths: {
        "127.0.0.1:5000": { auth: basic("alice", "s3:cret") },
        "https://index.docker.io/v1/": { auth: basic("bob", "hub") },
        "https://ghcr.io": { identitytoken: "tok" },
      },
    };
    expect(authFromConfig(config, "127.0.0.1:5000")).toEqual({
      serveraddress: "127.0.0.1:5000",
      username: "alice",
      password: "s3:cret",
    });
    expect(authFromConfig(config, "docker.io")).toMatchObject({ username: "bob", password: "hub" });
    expect(authFromConfig(config, "ghcr.io")).toEqual({ serveraddress: "ghcr.io", identitytoken: "tok" });
    expect(authFromConfig(config, "quay.io")).toBeUndefined();
  });

  it("a missing or broken config.json is no credentials (an anonymous pull)", async () => {
    const dir = mkdtempSync(join(tmpdir(), "drydock-auth-"));
    try {
      expect(await registryAuth("127.0.0.1:5000", dir)).toBeUndefined();
      writeFileSync(join(dir, "config.json"), "{not json");
      expect(await registryAuth("127.0.0.1:5000", dir)).toBeUndefined();
      writeFileSync(
        join(dir, "config.json"),
        JSON.stringify({ auths: { "127.0.0.1:5000": { auth: basic("a", "b") } } }),
      );
      expect(await registryAuth("127.0.0.1:5000", dir)).toMatchObject({ username: "a", password: "b" });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
