/**
 * Images for the registry tests, made here from what the engine already holds (nothing is
 * downloaded): a slim copy of the sandbox image that still holds what a box needs (pushing the
 * whole 1.6 GB image to a registry takes minutes on two cores: it is gzipped layer by layer), an
 * image of a few files that lacks git and bash, and a marker layer on top of either, so a test can
 * tell which image a box runs.
 */
import { readFileSync } from "node:fs";
import { PassThrough, Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import tar from "tar-stream";
import type { Engine } from "../../src/engine/engine.js";
import { pushImage, type PushedImage } from "../../src/engine/image-push.js";

/**
 * What the slim image leaves out of the sandbox image: toolchains, aider, docs, caches. It keeps
 * python3 and its standard library (without its tests): the box agent runs on them.
 */
const LEFT_OUT = [
  /^opt\/(aider|venv|go|cargo)\//,
  /^usr\/share\/(?!git-core\/|terminfo\/|ca-certificates\/)/,
  /^usr\/(lib|libexec)\/gcc\//,
  /^usr\/lib\/python3(\/|\.\d+\/test\/)/,
  /^usr\/include\//,
  /^usr\/local\/(include|lib|share)\//,
  /^var\/(lib\/apt|lib\/dpkg|cache)\//,
  /^usr\/lib\/x86_64-linux-gnu\/(.*\.a$|libnode|libpython|perl\/|libicu|lib[atl]san|libubsan|libhwasan|libgfortran|libgo\.)/,
  /^usr\/bin\/(x86_64-linux-gnu-|lto-dump|cpp|gcc|g\+\+|c\+\+|perl)/,
  /^usr\/local\/bin\/(node|npm|npx|corepack)/,
];

async function drain(stream: NodeJS.ReadableStream, engine: Engine): Promise<void> {
  await new Promise<void>((resolve, reject) =>
    engine.docker.modem.followProgress(stream, (error: Error | null, output: Array<{ error?: string }>) => {
      const failed = error?.message ?? output.find((o) => o.error)?.error;
      if (failed) reject(new Error(failed));
      else resolve();
    }),
  );
}

/**
 * The sandbox image's files without its toolchains, as one layer (about a sixth of its size),
 * with its user, PATH and command: an image a registry can take in seconds that can still serve
 * as a box. Kept by the sandbox image's id, made once per machine.
 */
export async function slimBoxImage(engine: Engine, sandbox: string): Promise<string> {
  const id = (await engine.imageId(sandbox))!.replace(/^sha256:/, "").slice(0, 12);
  const tag = `drydock-test-slim-python:${id}`;
  if (await engine.hasImage(tag)) return tag;
  const container = await engine.docker.createContainer({ Image: sandbox, Cmd: ["true"] });
  try {
    const exported = (await container.export()) as unknown as NodeJS.ReadableStream;
    const extract = tar.extract();
    const pack = tar.pack();
    const skipped = new Set<string>();
    extract.on("entry", (header, stream, next) => {
      const name = header.name.replace(/^\.?\//, "");
      const linked =
        header.type === "link" && header.linkname ? header.linkname.replace(/^\.?\//, "") : undefined;
      if (LEFT_OUT.some((r) => r.test(name)) || (linked !== undefined && skipped.has(linked))) {
        skipped.add(name);
        stream.on("end", next);
        stream.resume();
        return;
      }
      stream.pipe(pack.entry(header, next));
    });
    extract.on("finish", () => pack.finalize());
    extract.on("error", (e) => pack.destroy(e));
    const feeding = pipeline(exported as Readable, extract);
    const config = (await engine.docker.getImage(sandbox).inspect()).Config;
    const changes = [
      ...(config.Env ?? []).map((e) => `ENV ${e}`),
      `USER ${config.User || "agent"}`,
      `WORKDIR ${config.WorkingDir || "/workspace"}`,
      `CMD ${JSON.stringify(config.Cmd ?? ["sleep", "infinity"])}`,
    ];
    const body = new PassThrough();
    pack.pipe(body);
    const [repo, version] = tag.split(":");
    const imported = (await engine.docker.importImage(
      body as unknown as NodeJS.ReadableStream,
      {
        repo,
        tag: version,
        changes,
      } as never,
    )) as unknown as NodeJS.ReadableStream;
    await Promise.all([drain(imported, engine), feeding]);
  } finally {
    await container.remove({ force: true });
  }
  return tag;
}

/**
 * An image of a few files from the host: /bin/sh (dash), sleep and the C library. It starts as a
 * box and runs the requirements probe, and lacks bash, git, tar and the rest.
 */
export async function tinyImageWithoutGit(engine: Engine, tag: string): Promise<string> {
  const pack = tar.pack();
  const files: Array<[string, string]> = [
    ["bin/sh", "/usr/bin/dash"],
    ["bin/sleep", "/usr/bin/sleep"],
    ["lib/x86_64-linux-gnu/libc.so.6", "/lib/x86_64-linux-gnu/libc.so.6"],
    ["lib64/ld-linux-x86-64.so.2", "/lib64/ld-linux-x86-64.so.2"],
  ];
  for (const dir of ["bin", "lib", "lib/x86_64-linux-gnu", "lib64", "tmp", "etc"]) {
    pack.entry({ name: dir, type: "directory", mode: dir === "tmp" ? 0o1777 : 0o755 });
  }
  pack.entry({ name: "etc/passwd", mode: 0o644 }, "root:x:0:0:root:/root:/bin/sh\n");
  for (const [name, from] of files) pack.entry({ name, mode: 0o755 }, readFileSync(from));
  pack.finalize();
  const [repo, version] = tag.split(/:(?=[^:/]+$)/);
  const imported = (await engine.docker.importImage(
    pack as unknown as NodeJS.ReadableStream,
    {
      repo,
      tag: version,
      changes: ['CMD ["sleep","infinity"]'],
    } as never,
  )) as unknown as NodeJS.ReadableStream;
  await drain(imported, engine);
  return tag;
}

/** `base` with a file /etc/drydock-marker holding `marker`: a layer only this image has. */
export async function markedImage(
  engine: Engine,
  base: string,
  tag: string,
  marker: string,
): Promise<string> {
  const pack = tar.pack();
  pack.entry({ name: "Dockerfile" }, `FROM ${base}\nCOPY marker /etc/drydock-marker\n`);
  pack.entry({ name: "marker", mode: 0o644 }, `${marker}\n`);
  pack.finalize();
  await engine.buildImage(Readable.from(pack), { tag, buildArgs: {} }, () => undefined);
  return tag;
}

/** Pushes an image to its registry (with credentials when given), then removes the local tag. */
export async function pushAndForget(
  engine: Engine,
  ref: string,
  auth: { username?: string; password?: string; serveraddress: string },
): Promise<void> {
  const stream = (await engine.docker
    .getImage(ref)
    .push({ authconfig: auth } as never)) as unknown as NodeJS.ReadableStream;
  await drain(stream, engine);
  await engine.docker.getImage(ref).remove({ noprune: false });
}

/**
 * The slim box image with a marker layer, pushed to `registry` as `REGISTRY/PATH` and gone from
 * the engine: what a cluster's nodes must pull. Returns the push's names (tag, by digest, digest).
 */
export async function pushedBoxImage(
  engine: Engine,
  sandbox: string,
  target: string,
  marker: string,
): Promise<PushedImage> {
  const local = await markedImage(
    engine,
    await slimBoxImage(engine, sandbox),
    `drydock-pushed-box:${marker}`,
    marker,
  );
  const pushed = await pushImage(engine, local, target);
  await engine.removeImage(local).catch(() => undefined);
  await engine.removeImage(pushed.tagged).catch(() => undefined);
  return pushed;
}
