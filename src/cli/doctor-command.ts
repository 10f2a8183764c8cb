import { execFileSync } from "node:child_process";
import type { Command } from "commander";
import { Engine } from "../engine/engine.js";
import { runscProblems, resolveRuntime, runtimeFromEnv } from "../sandbox/box-runtime.js";
import { checkImage } from "../sandbox/image-check.js";
import { defaultSandboxImage } from "../sandbox/sandbox-image.js";
import { findDockerCli } from "../util/docker-cli.js";
import { sessionsFit } from "./sessions-fit.js";

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
        fix: `docker pull ${image}, or build it (drydock image build for drydock's own)`,
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

/** The runtimes the engine has, and the one boxes get (DRYDOCK_RUNTIME, else runc). */
async function runtimeCheck(engine: Engine): Promise<Check> {
  const runtimes = await engine.runtimes();
  const names = runtimes.map((r) => r.name).join(", ");
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
      detail: (error as Error).message,
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

export function registerDoctorCommand(program: Command): void {
  program
    .command("doctor")
    .description(
      "check the engine, the sandbox image, how many more sessions fit, the runtimes and git; exit non-zero if any check fails",
    )
    .option("--engine-only", "check only that the engine answers")
    .option("--json", "print the checks as JSON")
    .option("--image <image>", "check that an image can serve as a box (in a throwaway box, no network)")
    .action(async (opts: { engineOnly?: boolean; json?: boolean; image?: string }) => {
      const checks = await runChecks(Boolean(opts.engineOnly), opts.image);
      if (opts.json) process.stdout.write(JSON.stringify(checks, null, 2) + "\n");
      else {
        for (const c of checks) {
          process.stdout.write(`${c.ok ? "ok  " : "FAIL"} ${c.name}: ${c.detail}\n`);
          if (!c.ok && c.breaks) process.stdout.write(`     breaks: ${c.breaks}\n`);
          if (!c.ok && c.fix) process.stdout.write(`     fix: ${c.fix}\n`);
        }
      }
      process.exitCode = checks.every((c) => c.ok) ? 0 : 1;
    });
}
