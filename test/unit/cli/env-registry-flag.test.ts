import { describe, expect, it } from "vitest";
import { parseEnvRegistry } from "../../../src/cli/env-registry-flag.js";

describe("serve --env-registry", () => {
  it("takes a registry host with an optional path, without a trailing slash", () => {
    expect(parseEnvRegistry("127.0.0.1:5000")).toBe("127.0.0.1:5000");
    expect(parseEnvRegistry("registry.example.com/team/")).toBe("registry.example.com/team");
    expect(parseEnvRegistry("localhost:5000/a/b")).toBe("localhost:5000/a/b");
  });

  it("refuses what names no registry host, a tag or a digest, naming the flag", () => {
    for (const bad of [
      "team",
      "team/envs",
      "registry.example.com/Team",
      "registry.example.com/team:1",
      "127.0.0.1:5000/x@sha256:abc",
      "",
    ]) {
      expect(() => parseEnvRegistry(bad), bad).toThrow(/--env-registry: /);
    }
  });
});
