import { describe, expect, it } from "vitest";
import { allowEntryCovers, parseImageReference } from "../../../src/engine/image-reference.js";

describe("parseImageReference", () => {
  it("fills in Docker Hub's defaults as the engine does", () => {
    expect(parseImageReference("python:3.12")).toMatchObject({
      registry: "docker.io",
      path: "library/python",
      tag: "3.12",
      full: "docker.io/library/python:3.12",
    });
    expect(parseImageReference("acme/app")?.full).toBe("docker.io/acme/app");
    expect(parseImageReference("index.docker.io/library/python:3.12")?.full).toBe(
      "docker.io/library/python:3.12",
    );
  });

  it("reads a first part with a dot, a port or localhost as the registry", () => {
    expect(parseImageReference("127.0.0.1:5000/team/py:1")).toMatchObject({
      registry: "127.0.0.1:5000",
      path: "team/py",
      tag: "1",
    });
    expect(parseImageReference("localhost/app")?.registry).toBe("localhost");
    expect(parseImageReference("ghcr.io/acme/app@sha256:" + "a".repeat(64))).toMatchObject({
      registry: "ghcr.io",
      digest: "sha256:" + "a".repeat(64),
    });
  });

  it("refuses what is not a reference", () => {
    for (const bad of ["", "a b", "UPPER/case", "${X}", "a//b", "x:tag with space"]) {
      expect(parseImageReference(bad)).toBeUndefined();
    }
  });
});

describe("allowEntryCovers", () => {
  it("covers the same image however it is written", () => {
    expect(allowEntryCovers("python:3.12", "docker.io/library/python:3.12")).toBe(true);
    expect(allowEntryCovers("python", "python:latest")).toBe(true);
    expect(allowEntryCovers("python:3.12", "python:3.13")).toBe(false);
  });

  it("covers everything under a registry or path with /*, and nothing beside it", () => {
    expect(allowEntryCovers("127.0.0.1:5000/*", "127.0.0.1:5000/team/py:1")).toBe(true);
    expect(allowEntryCovers("127.0.0.1:5000/*", "127.0.0.1:5001/py:1")).toBe(false);
    expect(allowEntryCovers("ghcr.io/acme/*", "ghcr.io/acme/app:1")).toBe(true);
    expect(allowEntryCovers("ghcr.io/acme/*", "ghcr.io/acme-evil/app:1")).toBe(false);
    expect(allowEntryCovers("docker.io/*", "python:3.12")).toBe(true);
    expect(allowEntryCovers("docker.io/library/*", "acme/app")).toBe(false);
  });

  it("a bare * covers nothing", () => {
    expect(allowEntryCovers("*", "python:3.12")).toBe(false);
    expect(allowEntryCovers("/*", "python:3.12")).toBe(false);
  });
});
