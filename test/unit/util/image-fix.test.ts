/**
 * A missing image's message names a command that makes that very image: drydock's sandbox image
 * has `drydock image build`; any other image (a task's `image`, `--image`) is loaded or built
 * with docker, never sent to `drydock image build`, which cannot make it.
 */
import { describe, expect, it } from "vitest";
import { ImageMissingError, imageFix } from "../../../src/util/errors.js";

describe("imageFix", () => {
  it("sends drydock's own sandbox image to drydock image build", () => {
    expect(imageFix("drydock-sandbox:62356c5cd18a")).toBe("build it with `drydock image build`");
  });

  it("says how to load or build any other image, by its name", () => {
    const fix = imageFix("ghcr.io/acme/py311:2");
    expect(fix).toBe(
      "load or build the image first: `docker pull ghcr.io/acme/py311:2` from a registry, `docker load -i FILE.tar` from a saved copy, or `docker build -t ghcr.io/acme/py311:2 DIR`",
    );
    expect(fix).not.toMatch(/drydock image build/);
  });

  it("says an environment image is built again by its environment's next use", () => {
    expect(imageFix("drydock-env:0123456789ab")).toMatch(
      /next session or eval that uses its environment builds it again/,
    );
    expect(imageFix("drydock-env:0123456789ab")).not.toMatch(/drydock (image|env) build/);
  });

  it("is the fix ImageMissingError gives", () => {
    expect(new ImageMissingError("python:3.12-slim").message).toBe(
      "image python:3.12-slim is not present in the engine; load or build the image first: `docker pull python:3.12-slim` from a registry, `docker load -i FILE.tar` from a saved copy, or `docker build -t python:3.12-slim DIR`",
    );
  });
});
