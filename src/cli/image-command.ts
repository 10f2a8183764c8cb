import type { Command } from "commander";
import { Engine } from "../engine/engine.js";
import { pushImage } from "../engine/image-push.js";
import { buildSandboxImage } from "../sandbox/sandbox-image.js";
import { buildServerImage } from "../sandbox/server-image.js";
import { printOut, printErr } from "./terminal-out.js";

export function registerImageCommand(program: Command): void {
  const image = program.command("image").description("build, inspect and push the sandbox image");
  image
    .command("build")
    .description(
      "build the sandbox image (a debootstrap base first where no registry answers); unchanged inputs are not rebuilt",
    )
    .option(
      "--ca-cert <path>",
      "CA bundle the build trusts (default: SSL_CERT_FILE / NODE_EXTRA_CA_CERTS / the system bundle)",
    )
    .option(
      "--base <image>",
      "base image to build on (default: debian:bookworm-slim, else a debootstrap base)",
    )
    .option("--force", "rebuild even when the image is up to date")
    .option(
      "--server",
      "build drydock's own server image instead (for drydock serve as a Pod in a cluster: deploy/kubernetes/drydock.yaml)",
    )
    .action(async (opts: { caCert?: string; base?: string; force?: boolean; server?: boolean }) => {
      const engine = await Engine.connect();
      const started = Date.now();
      const tag = await (opts.server ? buildServerImage : buildSandboxImage)(engine, {
        caCert: opts.caCert,
        base: opts.base,
        force: opts.force,
        onLine: (line) => printErr(`[${Math.round((Date.now() - started) / 1000)}s] ${line}\n`),
      });
      printOut(`${tag}\n`);
    });
  image
    .command("push")
    .description(
      "push the sandbox image (or --image IMAGE, such as an environment image) to a registry and print it by digest, the name a cluster's boxes use",
    )
    .argument("<target>", "REGISTRY/PATH[:TAG]; the tag defaults to the image's own")
    .option(
      "--image <image>",
      "the local image to push (default: this release's sandbox image, built if missing)",
    )
    .option("--json", "print {tagged, byDigest, digest} as JSON")
    .addHelpText(
      "after",
      "\nExample:\n  drydock image push 127.0.0.1:5000/drydock-sandbox\n  drydock serve --engine kubernetes:agents --image 127.0.0.1:5000/drydock-sandbox@sha256:…",
    )
    .action(async (target: string, opts: { image?: string; json?: boolean }) => {
      const engine = await Engine.connect();
      const started = Date.now();
      const onLine = (line: string) => printErr(`[${Math.round((Date.now() - started) / 1000)}s] ${line}\n`);
      const source = opts.image ?? (await buildSandboxImage(engine, { onLine }));
      const pushed = await pushImage(engine, source, target, onLine);
      printOut(opts.json ? `${JSON.stringify(pushed)}\n` : `${pushed.byDigest}\n`);
    });
}
