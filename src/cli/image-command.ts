import type { Command } from "commander";
import { Engine } from "../engine/engine.js";
import { buildSandboxImage } from "../sandbox/sandbox-image.js";
import { printOut, printErr } from "./terminal-out.js";

export function registerImageCommand(program: Command): void {
  const image = program.command("image").description("build and inspect the sandbox image");
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
    .action(async (opts: { caCert?: string; base?: string; force?: boolean }) => {
      const engine = await Engine.connect();
      const started = Date.now();
      const tag = await buildSandboxImage(engine, {
        caCert: opts.caCert,
        base: opts.base,
        force: opts.force,
        onLine: (line) => printErr(`[${Math.round((Date.now() - started) / 1000)}s] ${line}\n`),
      });
      printOut(`${tag}\n`);
    });
}
