/**
 * drydock's own server image (images/server/Dockerfile), for `drydock serve` as a Pod in a
 * Kubernetes cluster (deploy/kubernetes/drydock.yaml): the package `npm pack` makes of this
 * installation, on the sandbox image's base with its Node.js. Tagged by a hash of every input
 * (the Dockerfile, the packed package, the sandbox and base images' ids), so an unchanged image
 * is never rebuilt.
 */
import { execFile } from "node:child_process";
import { createHash } from "node:crypto";
import { mkdtempSync, readFileSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Readable } from "node:stream";
import { promisify } from "node:util";
import tar from "tar-stream";
import type { Engine } from "../engine/engine.js";
import { DrydockError } from "../util/errors.js";
import { logger } from "../util/log.js";
import { projectRoot } from "../util/project-root.js";
import { buildSandboxImage, defaultCaBundle, resolveBase, type BuildOptions } from "./sandbox-image.js";

const log = logger("image");
export const SERVER_REPO = "drydock-server";

/** The Kubernetes client version this package is tested with (its development dependency). */
function kubernetesClientVersion(): string {
  const manifest = JSON.parse(readFileSync(join(projectRoot(), "package.json"), "utf8")) as {
    devDependencies?: Record<string, string>;
    peerDependencies?: Record<string, string>;
  };
  const version =
    manifest.devDependencies?.["@kubernetes/client-node"] ??
    manifest.peerDependencies?.["@kubernetes/client-node"];
  if (!version || !/^\d+\.\d+\.\d+$/.test(version)) {
    throw new DrydockError(
      "image_build_failed",
      "package.json pins no exact @kubernetes/client-node version",
    );
  }
  return version;
}

/**
 * The package as `npm pack` makes it from this installation (a checkout with `dist` built, or
 * the installed package itself). Scripts are not run: the installation's `dist` is what runs.
 */
async function packPackage(): Promise<Buffer> {
  const dir = mkdtempSync(join(tmpdir(), "drydock-pack-"));
  try {
    const npm = process.platform === "win32" ? "npm.cmd" : "npm";
    await promisify(execFile)(npm, ["pack", "--ignore-scripts", "--silent", "--pack-destination", dir], {
      cwd: projectRoot(),
      maxBuffer: 16 << 20,
    });
    const [file] = readdirSync(dir).filter((f) => f.endsWith(".tgz"));
    if (!file) throw new Error("npm pack made no tarball");
    return readFileSync(join(dir, file));
  } catch (error) {
    throw new DrydockError(
      "image_build_failed",
      `npm pack of ${projectRoot()} failed: ${(error as Error).message}`,
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Builds the server image if its tag is missing (the sandbox image first, if that is); returns the tag. */
export async function buildServerImage(engine: Engine, options: BuildOptions = {}): Promise<string> {
  const onLine = options.onLine ?? ((line: string) => log.info(line));
  const sandbox = await buildSandboxImage(engine, { ...options, force: false, onLine });
  const base = await resolveBase(engine, options, onLine);
  const dockerfile = readFileSync(join(projectRoot(), "images", "server", "Dockerfile"));
  const clientVersion = kubernetesClientVersion();
  onLine("packing the drydock package (npm pack)");
  const packed = await packPackage();
  const hash = createHash("sha256");
  for (const part of [
    dockerfile,
    packed,
    (await engine.imageId(sandbox))!,
    (await engine.imageId(base))!,
    clientVersion,
  ]) {
    hash.update(part).update("\0");
  }
  const tag = `${SERVER_REPO}:${hash.digest("hex").slice(0, 12)}`;
  if (!options.force && (await engine.hasImage(tag))) {
    onLine(`${tag} is up to date`);
    return tag;
  }
  const caPath = options.caCert ?? defaultCaBundle();
  const pack = tar.pack();
  pack.entry({ name: "Dockerfile" }, dockerfile);
  pack.entry({ name: "ca-bundle.crt" }, caPath ? readFileSync(caPath) : "");
  pack.entry({ name: "drydock.tgz" }, packed);
  pack.finalize();
  const started = Date.now();
  await engine.buildImage(
    Readable.from(pack),
    {
      tag,
      buildArgs: { SANDBOX_IMAGE: sandbox, BASE_IMAGE: base, KUBERNETES_CLIENT_VERSION: clientVersion },
    },
    onLine,
  );
  await engine.tag(tag, `${SERVER_REPO}:latest`);
  onLine(`built ${tag} in ${Math.round((Date.now() - started) / 1000)} s`);
  return tag;
}
