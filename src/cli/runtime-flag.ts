/**
 * `--runtime runc|runsc|auto` (default: DRYDOCK_RUNTIME, else runc), shared by serve, run and eval:
 * checked against the engine's runtimes before anything starts; a refusal names the flag (or the
 * variable) and how to register runsc, exit 2.
 */
import type { BoxEngine } from "../engine/box-engine.js";
import {
  checkRuntimeNetwork,
  parseRuntimeChoice,
  resolveRuntime,
  type BoxRuntime,
} from "../sandbox/box-runtime.js";
import { asFlagError } from "./flag-checks.js";

export const RUNTIME_HELP =
  "OCI runtime of the boxes: runc, runsc (gVisor) or auto (runsc when the engine has it); default DRYDOCK_RUNTIME, else runc";

/** The runtime boxes get: the flag, else DRYDOCK_RUNTIME, else runc; checked against the engine and --network. */
export async function runtimeFlag(
  engine: BoxEngine,
  flag: string | undefined,
  network?: string,
): Promise<BoxRuntime> {
  const fromEnv = flag === undefined && !!process.env.DRYDOCK_RUNTIME;
  const field = fromEnv ? "DRYDOCK_RUNTIME" : "--runtime";
  return asFlagError(async () => {
    // An empty DRYDOCK_RUNTIME is unset, as runtimeFromEnv reads it.
    const choice = parseRuntimeChoice(flag ?? (process.env.DRYDOCK_RUNTIME || "runc"), field);
    const runtime = await resolveRuntime(engine, choice, field);
    checkRuntimeNetwork(runtime, network, "--network");
    return runtime;
  }, {});
}
