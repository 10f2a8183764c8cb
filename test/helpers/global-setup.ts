import { existsSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { TestProject } from "vitest/node";
import { Engine } from "../../src/engine/engine.js";
import { LABEL_STATE } from "../../src/engine/labels.js";
import { environmentImages, removeImages } from "../../src/environment/environment-prune.js";
import { buildSandboxImage } from "../../src/sandbox/sandbox-image.js";

/**
 * Integration tests need a real Docker Engine and the sandbox image. No engine is a failure with
 * the fix in its message, never a silent skip. The image is built here if it is missing.
 */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
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
  await removeBoxesOfDeadRuns(engine);
  await removeBoxesOfFinishedTests(engine);
  // After the run: the environment images built for the tests' own temporary repositories, once
  // those are gone (a test that forgot its image, or stopped before removing it); and the boxes
  // of tests whose state directory is gone (a drydock a test killed leaves its boxes stopped).
  return async () => {
    await removeBoxesOfFinishedTests(engine);
    const ours = [join(tmpdir(), "drydock-repo-"), join(tmpdir(), "drydock-readme-")];
    const left = (await environmentImages(engine)).filter(
      (i) =>
        i.repo !== null && ours.some((p) => i.repo!.startsWith(p)) && !existsSync(i.repo) && i.boxes === 0,
    );
    await removeImages(engine, left).catch(() => undefined);
  };
}

declare module "vitest" {
  export interface ProvidedContext {
    sandboxImage: string;
  }
}

/**
 * Each test run keeps its drydock state in a directory of its own (vitest.config.ts), so a later
 * run's servers never prune the boxes of a run that was killed: they are removed here, once that
 * run's process is gone.
 */
async function removeBoxesOfDeadRuns(engine: Engine): Promise<void> {
  const prefix = join(tmpdir(), "drydock-test-state-");
  for (const box of await engine.listBoxes(LABEL_STATE)) {
    const state = box.labels[LABEL_STATE] ?? "";
    if (!state.startsWith(prefix)) continue;
    const pid = Number(state.slice(prefix.length));
    if (!Number.isInteger(pid) || pid === process.pid || isAlive(pid)) continue;
    await engine.remove(box.id).catch(() => undefined);
  }
}

/**
 * Tests that start a drydock of their own give it a state directory `drydock-state-*` and remove
 * that directory when they end. A drydock such a test killed leaves its boxes stopped (they end
 * with it), and nothing on that state directory will come to prune them: once the directory is
 * gone, they are removed here.
 */
async function removeBoxesOfFinishedTests(engine: Engine): Promise<void> {
  const prefix = join(tmpdir(), "drydock-state-");
  for (const box of await engine.listBoxes(LABEL_STATE)) {
    const state = box.labels[LABEL_STATE] ?? "";
    if (!state.startsWith(prefix) || existsSync(state)) continue;
    await engine.remove(box.id).catch(() => undefined);
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}
