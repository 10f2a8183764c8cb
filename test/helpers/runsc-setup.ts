import { Engine } from "../../src/engine/engine.js";
import { resolveRuntime } from "../../src/sandbox/box-runtime.js";

/**
 * The integration-runsc project runs the security and fault suites with every box under gVisor.
 * An engine without a usable runsc fails the project with the fix, never a silent skip.
 */
export default async function setup(): Promise<void> {
  const engine = await Engine.connect();
  try {
    await resolveRuntime(engine, "runsc", "DRYDOCK_RUNTIME=runsc (the integration-runsc test project)");
  } catch (error) {
    throw new Error(
      `${(error as Error).message}\nFix: run \`bash scripts/setup.sh\` as root; elsewhere register runsc by hand (docs/runtimes.md).`,
    );
  }
}
