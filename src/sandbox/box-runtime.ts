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
 * to start one without this), and connecting to host unix sockets that exist (the LLM gateway's
 * and the egress proxy's, bind-mounted at /run/drydock), never creating them.
 */
export const RUNSC_ARGS = ["--network=none", "--host-uds=open"] as const;

/** Arguments that also let a box reach the host's unix sockets (older spellings, or more). */
const HOST_UDS_ARGS = ["--host-uds=open", "--host-uds=all", "--fsgofer-host-uds", "--fsgofer-host-uds=true"];

export const REGISTER_RUNSC_HINT =
  "register it with `bash scripts/setup.sh` as root (installs the runsc package and adds it to /etc/docker/daemon.json), " +
  'or by hand: add {"runtimes":{"runsc":{"path":"/usr/bin/runsc","runtimeArgs":["--network=none","--host-uds=open"]}}} to /etc/docker/daemon.json and reload dockerd (kill -HUP $(pidof dockerd)); see docs/runtimes.md';

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
  if (!runtime.args.some((arg) => HOST_UDS_ARGS.includes(arg))) {
    problems.push(
      "its runtimeArgs lack --host-uds=open (without it the box cannot reach the LLM gateway's unix socket)",
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
