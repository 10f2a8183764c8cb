import { runtimeFromEnv, type BoxRuntime } from "../../src/sandbox/box-runtime.js";

/**
 * The runtime the tests' boxes get: runc, or runsc in the integration-runsc project
 * (DRYDOCK_RUNTIME=runsc). Box.create takes the same variable, so a test asks only where what it
 * expects differs between the two kernels.
 */
export function boxRuntime(): BoxRuntime {
  return runtimeFromEnv() === "runsc" ? "runsc" : "runc";
}
