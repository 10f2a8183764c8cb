/**
 * The sandbox image: built from Dockerfile.sandbox on a Debian base, tagged with a hash of its
 * inputs so an unchanged image is never rebuilt. Where no registry can be reached, the base is
 * built with debootstrap (images/base/build.sh) and imported.
 */
import { spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, readFileSync, readdirSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import tar from "tar-stream";
import { Readable } from "node:stream";
import { Engine } from "../engine/engine.js";
export { clusterImageMissing } from "../engine/kubernetes/cluster-image.js";
import { DrydockError } from "../util/errors.js";
import { logger } from "../util/log.js";
import { projectRoot } from "../util/project-root.js";

const log = logger("image");
export const STOCK_BASE = "debian:bookworm-slim";
export const SANDBOX_REPO = "drydock-sandbox";
const LATEST = `${SANDBOX_REPO}:latest`;

function filesUnder(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir).sort()) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) out.push(...filesUnder(path));
    else out.push(path);
  }
  return out;
}

export function hashFiles(paths: string[], extra: string[] = []): string {
  const root = projectRoot();
  const hash = createHash("sha256");
  for (const p of paths) hash.update(relative(root, p)).update("\0").update(readFileSync(p)).update("\0");
  for (const e of extra) hash.update(e).update("\0");
  return hash.digest("hex").slice(0, 12);
}

/** The aider version Dockerfile.sandbox installs (what boxes of drydock's own image run). */
export function sandboxAiderVersion(): string | undefined {
  const text = readFileSync(join(projectRoot(), "Dockerfile.sandbox"), "utf8");
  return /^ARG AIDER_VERSION=(\S+)$/m.exec(text)?.[1];
}

/** The tag of the debootstrap base this checkout would build. */
export function localBaseTag(): string {
  return `drydock-base:bookworm-${hashFiles([join(projectRoot(), "images", "base", "build.sh")])}`;
}

function sandboxInputs(): string[] {
  const root = projectRoot();
  return [join(root, "Dockerfile.sandbox"), ...filesUnder(join(root, "images", "sandbox"))];
}

/** The tag of the sandbox image for a base image id: a hash of every build input. */
export function sandboxTag(baseImageId: string): string {
  return `${SANDBOX_REPO}:${hashFiles(sandboxInputs(), [baseImageId])}`;
}

/** The default sandbox image: `DRYDOCK_IMAGE`, else the newest tag this checkout would build. */
export async function defaultSandboxImage(engine: Engine): Promise<string> {
  if (process.env.DRYDOCK_IMAGE) return process.env.DRYDOCK_IMAGE;
  for (const base of [localBaseTag(), STOCK_BASE]) {
    const id = await engine.imageId(base);
    if (id) {
      const tag = sandboxTag(id);
      if (await engine.hasImage(tag)) return tag;
    }
  }
  return LATEST;
}

/**
 * The default sandbox image, built first when the engine lacks it, so a fresh machine needs no
 * `drydock image build` of its own. An image DRYDOCK_IMAGE names is never built: it is the
 * operator's, and a missing one is reported where it is used.
 */
export async function readySandboxImage(engine: Engine, onLine?: (line: string) => void): Promise<string> {
  const image = await defaultSandboxImage(engine);
  if (process.env.DRYDOCK_IMAGE || image !== LATEST) return image;
  // No image of this package's inputs: build one. An older build (`latest`) serves only when that fails.
  const say = onLine ?? ((line: string) => log.info(line));
  say("the sandbox image is not built yet: building it now (once per machine, a few minutes)");
  try {
    return await buildSandboxImage(engine, { onLine: say });
  } catch (error) {
    if (!(await engine.hasImage(LATEST))) throw error;
    log.warn(
      `building the sandbox image failed (${(error as Error).message}); using ${LATEST}, an earlier build, meanwhile: run \`drydock image build\` to see why`,
    );
    return LATEST;
  }
}

/**
 * The default sandbox image for a backend that is not Docker (a cluster's nodes get images by
 * push or import): DRYDOCK_IMAGE, else the tag the local Docker engine's build has, else
 * drydock-sandbox:latest.
 */
export async function clusterSandboxImage(): Promise<string> {
  if (process.env.DRYDOCK_IMAGE) return process.env.DRYDOCK_IMAGE;
  const local = await Engine.connect({ timeoutMs: 3_000 }).catch(() => undefined);
  return local ? defaultSandboxImage(local) : `${SANDBOX_REPO}:latest`;
}

export interface BuildOptions {
  /** A base image to build on; default: the stock Debian image, else a debootstrap base. */
  base?: string;
  /** CA bundle trusted by the build (pip behind a TLS-intercepting proxy). */
  caCert?: string;
  /** Rebuild even when the tag exists. */
  force?: boolean;
  onLine?: (line: string) => void;
}

export function defaultCaBundle(): string | undefined {
  for (const candidate of [
    process.env.SSL_CERT_FILE,
    process.env.NODE_EXTRA_CA_CERTS,
    process.env.PIP_CERT,
    "/etc/ssl/certs/ca-certificates.crt",
  ]) {
    if (candidate && existsSync(candidate)) return candidate;
  }
  return undefined;
}

async function runScript(script: string, args: string[], onLine: (line: string) => void): Promise<void> {
  await new Promise<void>((resolve, reject) => {
    const child = spawn("bash", [script, ...args], { stdio: ["ignore", "pipe", "pipe"] });
    const relay = (data: Buffer) => data.toString("utf8").split("\n").filter(Boolean).forEach(onLine);
    child.stdout.on("data", relay);
    child.stderr.on("data", relay);
    child.on("error", reject);
    child.on("exit", (code) =>
      code === 0
        ? resolve()
        : reject(new DrydockError("image_build_failed", `${script} failed with exit code ${code}`)),
    );
  });
}

export async function resolveBase(
  engine: Engine,
  options: BuildOptions,
  onLine: (line: string) => void,
): Promise<string> {
  if (options.base) {
    if (!(await engine.imageId(options.base))) {
      onLine(`pulling ${options.base}`);
      await engine.pull(options.base, 120_000);
    }
    return options.base;
  }
  for (const candidate of [STOCK_BASE, localBaseTag()]) {
    if (await engine.imageId(candidate)) return candidate;
  }
  try {
    onLine(`pulling ${STOCK_BASE}`);
    await engine.pull(STOCK_BASE, 30_000);
    return STOCK_BASE;
  } catch (error) {
    onLine(`cannot pull ${STOCK_BASE} (${(error as Error).message}); building a base with debootstrap`);
  }
  const tag = localBaseTag();
  await runScript(join(projectRoot(), "images", "base", "build.sh"), [tag], onLine);
  return tag;
}

/** Builds the sandbox image if its tag is missing; returns the tag. */
export async function buildSandboxImage(engine: Engine, options: BuildOptions = {}): Promise<string> {
  const onLine = options.onLine ?? ((line: string) => log.info(line));
  const base = await resolveBase(engine, options, onLine);
  const baseId = (await engine.imageId(base))!;
  const tag = sandboxTag(baseId);
  if (!options.force && (await engine.hasImage(tag))) {
    onLine(`${tag} is up to date`);
    return tag;
  }
  const caPath = options.caCert ?? defaultCaBundle();
  if (options.caCert && !existsSync(options.caCert)) {
    throw new DrydockError(
      "invalid_argument",
      `--ca-cert: ${options.caCert} does not exist; give the path of a PEM CA bundle`,
    );
  }
  const root = projectRoot();
  const pack = tar.pack();
  pack.entry({ name: "Dockerfile" }, readFileSync(join(root, "Dockerfile.sandbox")));
  pack.entry({ name: "ca-bundle.crt" }, caPath ? readFileSync(caPath) : "");
  for (const file of filesUnder(join(root, "images", "sandbox"))) {
    const name = relative(join(root, "images", "sandbox"), file);
    pack.entry({ name, mode: statSync(file).mode & 0o777 }, readFileSync(file));
  }
  pack.finalize();
  const started = Date.now();
  await engine.buildImage(Readable.from(pack), { tag, buildArgs: { BASE_IMAGE: base } }, onLine);
  await engine.tag(tag, `${SANDBOX_REPO}:latest`);
  onLine(`built ${tag} in ${Math.round((Date.now() - started) / 1000)} s`);
  return tag;
}
