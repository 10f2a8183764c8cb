import type { TestProject } from "vitest/node";
import { Engine } from "../../src/engine/engine.js";
import { buildSandboxImage } from "../../src/sandbox/sandbox-image.js";

/**
 * Integration tests need a real Docker Engine and the sandbox image. No engine is a failure with
 * the fix in its message, never a silent skip. The image is built here if it is missing.
 */
export default async function setup(project: TestProject): Promise<void> {
  let engine: Engine;
  try {
    engine = await Engine.connect();
  } catch (error) {
    throw new Error(
      `integration tests need a Docker Engine: ${(error as Error).message}\n` +
        "Fix: run `bash scripts/setup.sh` as root (installs and starts docker.io on Debian), or start Docker and set DOCKER_HOST.",
    );
  }
  const image =
    process.env.DRYDOCK_IMAGE ??
    (await buildSandboxImage(engine, { onLine: (l) => console.error(`[image] ${l}`) }));
  project.provide("sandboxImage", image);
}

declare module "vitest" {
  export interface ProvidedContext {
    sandboxImage: string;
  }
}
