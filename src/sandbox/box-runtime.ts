/**
 * The OCI runtime a box runs under: runc (the engine's default: the box's processes make their
 * system calls to the host's kernel) or runsc (gVisor: a user-space kernel answers them). Chosen by
 * `--runtime` or DRYDOCK_RUNTIME, checked against what the engine has before a box is made.
 */
import type { BoxEngine, EngineRuntime } from "../engine/box-engine.js";
import { InvalidArgumentError } from "../util/errors.js";

export const RUNTIMES = ["runc", "runsc"] as const;
export type BoxRuntime = (typeof RUNTIMES)[number];
/** What a user may ask for: a runtime, or `auto` (runsc when the engine has it, else runc). */
export type RuntimeChoice = BoxRuntime | "auto";
export const RUNTIME_CHOICES: readonly RuntimeChoice[] = [...RUNTIMES, "auto"];

export const DEFAULT_RUNTIME: BoxRuntime = "runc";

/**
 * runsc's arguments drydock registers: no network of its own (boxes have none, and runsc refuses
 * to start one without this). Not `--host-uds`: no box has a host path, so none needs a host unix
 * socket (the gateway and egress proxy are reached through drydock's relay), and without it gVisor
 * refuses a connection to any. A registration that still has it is accepted.
 */
export const RUNSC_ARGS = ["--network=none"] as const;

export const REGISTER_RUNSC_HINT =
  "register it with `bash scripts/setup.sh` as root (installs the runsc package and adds it to /etc/docker/daemon.json), " +
  'or by hand: add {"runtimes":{"runsc":{"path":"/usr/bin/runsc","runtimeArgs":["--network=none"]}}} to /etc/docker/daemon.json and reload dockerd (kill -HUP $(pidof dockerd)); see docs/runtimes.md';

/** A runtime choice from text; `field` names where it came from (a flag or DRYDOCK_RUNTIME). */
export function parseRuntimeChoice(value: string, field: string): RuntimeChoice {
  const choice = value.trim().toLowerCase();
  if ((RUNTIME_CHOICES as readonly string[]).includes(choice)) return choice as RuntimeChoice;
  throw new InvalidArgumentError(
    field,
    `${JSON.stringify(value)} is not a runtime; use one of ${RUNTIME_CHOICES.join(", ")}`,
  );
}

/** The choice DRYDOCK_RUNTIME makes (default runc). */
export function runtimeFromEnv(env: NodeJS.ProcessEnv = process.env): RuntimeChoice {
  const value = env.DRYDOCK_RUNTIME;
  return value === undefined || value === "" ? DEFAULT_RUNTIME : parseRuntimeChoice(value, "DRYDOCK_RUNTIME");
}

/** Why a registered runsc cannot serve boxes as drydock makes them (empty: it can). */
export function runscProblems(runtime: EngineRuntime): string[] {
  const problems: string[] = [];
  if (runtime.argsKnown === false) return problems;
  if (!runtime.args.includes("--network=none")) {
    problems.push(
      "its runtimeArgs lack --network=none (without it runsc refuses to start a box that has no network)",
    );
  }
  return problems;
}

/** The runtime a choice means on this engine, from the runtimes it has. Pure. */
export function pickRuntime(
  choice: RuntimeChoice,
  available: readonly EngineRuntime[],
  field = "runtime",
): BoxRuntime {
  const runsc = available.find((r) => r.name === "runsc");
  const runscUsable = runsc !== undefined && runscProblems(runsc).length === 0;
  if (choice === "auto") return runscUsable ? "runsc" : "runc";
  if (choice === "runc") {
    if (available.length === 0 || available.some((r) => r.name === "runc")) return "runc";
    throw new RuntimeUnavailableError(
      field,
      `the engine has no runtime "runc" (it has ${available.map((r) => r.name).join(", ")})`,
    );
  }
  if (!runsc) {
    throw new RuntimeUnavailableError(
      field,
      `the engine has no runtime "runsc" (it has ${available.map((r) => r.name).join(", ") || "none listed"}); ${REGISTER_RUNSC_HINT}`,
    );
  }
  const problems = runscProblems(runsc);
  if (problems.length > 0) {
    throw new RuntimeUnavailableError(
      field,
      `the engine's runsc cannot run drydock's boxes: ${problems.join("; ")}; ${REGISTER_RUNSC_HINT}`,
    );
  }
  return "runsc";
}

/** The runtime a choice means on this engine; asks the engine which runtimes it has. */
export async function resolveRuntime(
  engine: BoxEngine,
  choice: RuntimeChoice,
  field = "runtime",
): Promise<BoxRuntime> {
  return pickRuntime(choice, await engine.runtimes(), field);
}

/** A box cannot join a Docker network under runsc: the runtime is registered with --network=none. */
export function checkRuntimeNetwork(runtime: BoxRuntime, network: string | undefined, field: string): void {
  if (runtime === "runsc" && network !== undefined && network !== "none") {
    throw new InvalidArgumentError(
      field,
      `a Docker network (${JSON.stringify(network)}) works under runtime runc only: runsc is registered with --network=none. Use --runtime runc, or --egress HOSTS (works under both) for HTTPS to named hosts`,
    );
  }
}

/** A runtime that was asked for and that the engine cannot give. */
export class RuntimeUnavailableError extends InvalidArgumentError {
  override name = "RuntimeUnavailableError";
}
