import type { Command } from "commander";
import { Engine } from "../engine/engine.js";
import { EnvironmentImages, type EnvironmentStatus } from "../environment/environment-images.js";
import { readySandboxImage } from "../sandbox/sandbox-image.js";
import { registerEnvImageCommands } from "./env-images-command.js";
import { ALLOW_BASE_IMAGE_HELP, checkAllowBaseImages, collectBaseImage } from "./base-image-flag.js";
import { PULL_HELP, checkPullFlag } from "./pull-flag.js";
import { printErr, printJson, printOut } from "./terminal-out.js";
import { terminalLine } from "../util/terminal-text.js";

interface EnvOptions {
  repo: string;
  ref?: string;
  image?: string;
  caCert?: string;
  allowBaseImage?: string[];
  pull?: string;
  force?: boolean;
  json?: boolean;
}

/**
 * What `env show` prints for a person reviewing a build. Every value came from the repository
 * (its definition file, names, commands), so each is one escaped line, and a setup command's later
 * lines are indented under it: no value can draw a line that looks like another field.
 */
export function describe(status: EnvironmentStatus): string {
  const d = status.definition;
  const one = terminalLine;
  const lines = [
    `repository: ${one(status.repoRoot)} (${status.source})`,
    d.kind === "default"
      ? "definition: none (no .drydock/environment.yaml or .devcontainer/devcontainer.json): boxes use the sandbox image as it is"
      : `definition: ${one(d.file ?? "")}`,
  ];
  if (d.base.kind === "image") lines.push(`base: image ${one(d.base.ref)}`);
  if (d.base.kind === "dockerfile")
    lines.push(`base: ${one(d.base.dockerfile)} (context ${one(d.base.context || ".")})`);
  if (d.packages.length) lines.push(`packages: ${d.packages.map(one).join(" ")}`);
  for (const [k, v] of Object.entries(d.env)) lines.push(`env: ${one(k)}=${one(v)}`);
  for (const step of d.setup) {
    const [first = "", ...rest] = step.command.split("\n");
    lines.push(`${one(step.label)} (${one(step.from.file)}:${step.from.line}): ${one(first)}`);
    for (const line of rest) lines.push(`    | ${one(line)}`);
  }
  for (const w of d.warnings) lines.push(`not applied: ${one(w)}`);
  for (const b of status.baseImages ?? []) {
    if (b.operatorAllowed)
      lines.push(
        `allowed base: ${one(b.ref)} (${one(b.digest ?? b.id.replace(/^sha256:/, "").slice(0, 12))})`,
      );
  }
  if (status.plan) lines.push(`keyed by: ${status.plan.keyedBy.map(one).join(", ")}`);
  lines.push(
    `image: ${one(status.image)} (${status.present ? "built" : status.plan ? "not built yet: `drydock env build` builds it, and so does the first session" : "missing"})`,
  );
  return `${lines.join("\n")}\n`;
}

export function registerEnvCommand(program: Command): void {
  const env = program
    .command("env")
    .description(
      "a repository's environment: its toolchain and dependencies, built into an image layered on the sandbox image",
    );
  const common = (command: Command) =>
    command
      .option("--repo <path>", "the repository (default: the current directory)", ".")
      .option(
        "--ref <ref>",
        "read the definition and key files at this branch, tag or commit id (default: the working tree)",
      )
      .option(
        "--image <image>",
        "the sandbox image to build on (default: the one `drydock image build` made)",
      )
      .option("--allow-base-image <ref>", ALLOW_BASE_IMAGE_HELP, collectBaseImage, [] as string[])
      .option("--pull <when>", PULL_HELP, "missing");

  common(
    env
      .command("show")
      .description(
        "print what would be built for a repository, from which file, keyed by what, and whether it is built",
      )
      .option("--json", "print it as JSON"),
  ).action(async (opts: EnvOptions) => {
    const engine = await Engine.connect();
    const images = new EnvironmentImages(engine, {
      baseImage: opts.image ?? (await readySandboxImage(engine)),
      allowBaseImages: checkAllowBaseImages(opts.allowBaseImage),
      pull: checkPullFlag(opts.pull),
    });
    const status = await images.status(opts.repo, opts.ref, undefined, (line) => printErr(`${line}\n`));
    if (opts.json) {
      printJson(
        {
          repo: status.repoRoot,
          source: status.source,
          definition: status.definition,
          image: status.image,
          present: status.present,
          keyed_by: status.plan?.keyedBy ?? [],
          base_images: (status.baseImages ?? []).map((b) => ({
            ref: b.ref,
            id: b.id,
            digest: b.digest ?? null,
            operator_allowed: b.operatorAllowed,
          })),
        },
        2,
      );
    } else printOut(describe(status));
  });

  common(
    env
      .command("build")
      .description(
        "build a repository's environment image (with the network, during the build only); an unchanged environment is not rebuilt",
      )
      .option("--ca-cert <path>", "CA bundle the build trusts (default: SSL_CERT_FILE / the system bundle)")
      .option("--force", "rebuild even when the image exists"),
  ).action(async (opts: EnvOptions) => {
    const engine = await Engine.connect();
    const images = new EnvironmentImages(engine, {
      baseImage: opts.image ?? (await readySandboxImage(engine)),
      caCert: opts.caCert,
      allowBaseImages: checkAllowBaseImages(opts.allowBaseImage),
      pull: checkPullFlag(opts.pull),
    });
    const started = Date.now();
    const status = await images.imageFor({
      repo: opts.repo,
      ref: opts.ref,
      force: opts.force,
      onLine: (line) => printErr(`[${Math.round((Date.now() - started) / 1000)}s] ${line}\n`),
    });
    if (!status.plan) printErr("no environment definition: boxes use the sandbox image as it is\n");
    else if (!status.built) printErr(`${status.image} is up to date\n`);
    printOut(`${status.image}\n`);
  });
  registerEnvImageCommands(env);
}
