import { isKubernetesTarget } from "../engine/kubernetes/kubernetes-target.js";
import { execFileSync } from "node:child_process";
import type { Command } from "commander";
import { Engine } from "../engine/engine.js";
import { kubernetesBackend } from "../engine/connect-engine.js";
import type { EngineRuntime } from "../engine/box-engine.js";
import { runscProblems, resolveRuntime, runtimeFromEnv } from "../sandbox/box-runtime.js";
import { checkImage } from "../sandbox/image-check.js";
import { defaultSandboxImage } from "../sandbox/sandbox-image.js";
import { findDockerCli } from "../util/docker-cli.js";
import { EngineUnavailableError, imageFix } from "../util/errors.js";
import { sessionsFit } from "./sessions-fit.js";
import { terminalText } from "../util/terminal-text.js";
import { printJson, printOut } from "./terminal-out.js";

interface Check {
  name: string;
  ok: boolean;
  detail: string;
  /** What fails without it (image checks). */
  breaks?: string;
  fix?: string;
}

/** Whether `image` can serve as a box: each thing drydock runs in a box, checked in a throwaway box. */
async function imageChecks(engine: Engine, image: string): Promise<Check[]> {
  if (!(await engine.hasImage(image))) {
    return [
      {
        name: `image ${image}`,
        ok: false,
        detail: "not present in the engine",
        fix: imageFix(image),
      },
    ];
  }
  return (await checkImage(engine, image)).map((r) => ({
    name: `image: ${r.requirement.name}`,
    ok: r.ok,
    detail: r.detail,
    ...(r.ok ? {} : { breaks: r.requirement.breaks, fix: r.requirement.fix }),
  }));
}

/**
 * The runtimes' names, with the containerd names an engine lists for runc itself
 * (`io.containerd.runc.v2`, ...) folded into runc's entry, so the names a user passes come first.
 */
function runtimeNames(runtimes: EngineRuntime[]): string {
  const runc = runtimes.find((r) => r.name === "runc");
  const alias = (r: EngineRuntime) =>
    runc !== undefined && r.name.startsWith("io.containerd.") && r.path === runc.path;
  const aliases = runtimes.filter(alias).map((r) => r.name);
  return runtimes
    .filter((r) => !alias(r))
    .map((r) => (r === runc && aliases.length > 0 ? `runc (also named ${aliases.join(", ")})` : r.name))
    .join(", ");
}

/** The runtimes the engine has, and the one boxes get (DRYDOCK_RUNTIME, else runc). */
async function runtimeCheck(engine: Engine): Promise<Check> {
  const runtimes = await engine.runtimes();
  const names = runtimeNames(runtimes);
  const runsc = runtimes.find((r) => r.name === "runsc");
  const runscNote = !runsc
    ? "; runsc (gVisor) is not registered: bash scripts/setup.sh as root, see docs/runtimes.md"
    : runscProblems(runsc).length > 0
      ? `; runsc cannot run boxes: ${runscProblems(runsc).join("; ")}`
      : "";
  try {
    const choice = runtimeFromEnv();
    const runtime = await resolveRuntime(engine, choice, "DRYDOCK_RUNTIME");
    const why = process.env.DRYDOCK_RUNTIME
      ? `DRYDOCK_RUNTIME=${choice}`
      : "the default; --runtime or DRYDOCK_RUNTIME change it";
    return { name: "runtimes", ok: true, detail: `${names}; boxes get ${runtime} (${why})${runscNote}` };
  } catch (error) {
    return {
      name: "runtimes",
      ok: false,
      detail: `${names}; ${(error as Error).message}`,
      fix: "unset DRYDOCK_RUNTIME or set it to runc, or register runsc (docs/runtimes.md)",
    };
  }
}

/**
 * `--engine`, once or more: each engine answers (over TLS for tcp://), with its memory and cores,
 * and whether it has the sandbox image; the first engine's is sent to the others by `drydock eval`.
 */
async function engineChecks(urls: string[], tlsDir: string | undefined, image?: string): Promise<Check[]> {
  const checks: Check[] = [];
  let first: { engine: Engine; image: string } | undefined;
  for (const url of urls) {
    if (isKubernetesTarget(url)) {
      // Loaded only for a Kubernetes engine: its client library is large (connect-engine.ts).
      await kubernetesBackend();
      const { kubernetesChecks } = await import("./doctor-kubernetes.js");
      checks.push(...(await kubernetesChecks(url, image)));
      continue;
    }
    try {
      const engine = await Engine.connect({ url, tlsDir, timeoutMs: 5_000 });
      const [v, capacity] = await Promise.all([engine.version(), engine.capacity()]);
      checks.push({
        name: `engine ${engine.name}`,
        ok: true,
        detail: `Docker Engine ${v.version} (API ${v.apiVersion}, ${v.os}); ${capacity.cpus} cores, ${capacity.memoryMB} MiB`,
      });
      const wanted = image ?? first?.image ?? (await defaultSandboxImage(engine));
      const present = await engine.hasImage(wanted);
      checks.push({
        name: `image on ${engine.name}`,
        ok: present || first !== undefined,
        detail: present
          ? wanted
          : first
            ? `${wanted} is missing; drydock eval sends it from ${first.engine.name} before the first attempt there`
            : `${wanted} is missing`,
        ...(present || first ? {} : { fix: `with DOCKER_HOST set to this engine, ${imageFix(wanted)}` }),
      });
      first ??= { engine, image: wanted };
    } catch (error) {
      checks.push({
        name: `engine ${url.replace(/\?.*$/, "")}`,
        ok: false,
        detail: (error as Error).message,
        fix: "start that engine, check its address, and for tcp:// the certificates in --engine-tls-dir (ca.pem, cert.pem, key.pem)",
      });
    }
  }
  return checks;
}

async function runChecks(engineOnly: boolean, image?: string): Promise<Check[]> {
  const checks: Check[] = [];
  let engine: Engine | undefined;
  try {
    engine = await Engine.connect({ timeoutMs: 5_000 });
    const v = await engine.version();
    checks.push({
      name: "engine",
      ok: true,
      detail: `Docker Engine ${v.version} (API ${v.apiVersion}, ${v.os})`,
    });
  } catch (error) {
    checks.push({
      name: "engine",
      ok: false,
      // The error's own advice ends "check with drydock doctor": this is that check.
      detail:
        error instanceof EngineUnavailableError
          ? `no Docker Engine answers (${error.detail})`
          : (error as Error).message,
      fix: "run `bash scripts/setup.sh` as root, or start Docker / Podman and set DOCKER_HOST",
    });
  }
  if (engineOnly) return checks;
  if (image !== undefined) return engine ? [...checks, ...(await imageChecks(engine, image))] : checks;
  try {
    checks.push({ name: "docker CLI", ok: true, detail: findDockerCli() });
  } catch (error) {
    checks.push({
      name: "docker CLI",
      ok: false,
      detail: (error as Error).message,
      fix: "apt-get install docker.io",
    });
  }
  if (engine) {
    const image = await defaultSandboxImage(engine);
    const present = await engine.hasImage(image);
    checks.push({
      name: "sandbox image",
      ok: present,
      detail: present ? image : `${image} is missing`,
      fix: present ? undefined : "drydock image build",
    });
    checks.push(await sessionsFit(engine));
    checks.push(await runtimeCheck(engine));
  }
  try {
    const version = execFileSync("git", ["--version"], { encoding: "utf8" }).trim();
    checks.push({ name: "git", ok: true, detail: version });
  } catch {
    checks.push({ name: "git", ok: false, detail: "git not found", fix: "apt-get install git" });
  }
  return checks;
}

interface DoctorFlags {
  engineOnly?: boolean;
  json?: boolean;
  image?: string;
  engine?: string[];
  engineTlsDir?: string;
}

export function registerDoctorCommand(program: Command): void {
  program
    .command("doctor")
    .description(
      "check the engine, the sandbox image, how many more sessions fit, the runtimes and git; exit non-zero if any check fails",
    )
    .option("--engine-only", "check only that the engine answers")
    .option("--json", "print the checks as JSON")
    .option("--image <image>", "check that an image can serve as a box (in a throwaway box, no network)")
    .option(
      "--engine <url>",
      "check these engines instead (repeatable, as drydock eval --engine takes them): each answers, its memory, its image; a kubernetes:NAMESPACE also its permissions, RuntimeClasses, nodes' process limits and network isolation",
      (value: string, previous: string[] = []) => [...previous, value],
    )
    .option("--engine-tls-dir <dir>", "ca.pem, cert.pem and key.pem for tcp:// engines")
    .action(async (opts: DoctorFlags) => {
      const checks = opts.engine?.length
        ? await engineChecks(opts.engine, opts.engineTlsDir, opts.image)
        : await runChecks(Boolean(opts.engineOnly), opts.image);
      if (opts.json) printJson(checks, 2);
      else {
        for (const c of checks) {
          // A check's detail may quote an engine's or an image's own words.
          printOut(terminalText(`${c.ok ? "ok  " : "FAIL"} ${c.name}: ${c.detail}\n`));
          if (!c.ok && c.breaks) printOut(terminalText(`     breaks: ${c.breaks}\n`));
          if (!c.ok && c.fix) printOut(terminalText(`     fix: ${c.fix}\n`));
        }
      }
      process.exitCode = checks.every((c) => c.ok) ? 0 : 1;
    });
}
