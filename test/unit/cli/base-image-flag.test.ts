import { describe, expect, it } from "vitest";
import { checkAllowBaseImages, collectBaseImage } from "../../../src/cli/base-image-flag.js";
import { FlagError } from "../../../src/util/errors.js";

describe("--allow-base-image", () => {
  it("collects every reference given, in order", () => {
    expect(collectBaseImage("b:2", collectBaseImage("a:1"))).toEqual(["a:1", "b:2"]);
    expect(checkAllowBaseImages(["python:3.12-slim", "reg.example/team/img@sha256:abc"])).toHaveLength(2);
    expect(checkAllowBaseImages(undefined)).toEqual([]);
  });

  it("refuses what is not a plain image reference, naming the flag", () => {
    for (const bad of ["", "a b", "${X}", "-x"]) {
      expect(() => checkAllowBaseImages([bad])).toThrow(FlagError);
      expect(() => checkAllowBaseImages([bad])).toThrow(/^--allow-base-image: /);
    }
  });
});

describe("--allow-base-image REGISTRY/*", () => {
  it("takes every image under a registry or path, and refuses a bare *", () => {
    expect(checkAllowBaseImages(["127.0.0.1:5000/*", "ghcr.io/acme/*"])).toHaveLength(2);
    for (const bad of ["*", "/*", "a b/*"]) expect(() => checkAllowBaseImages([bad])).toThrow(FlagError);
  });
});
