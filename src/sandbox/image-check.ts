/**
 * Checks that an image can serve as a box: a throwaway box with the default hardening (no
 * network, read-only root, uid 1000) runs the requirements probe, then is removed.
 */
import { randomBytes } from "node:crypto";
import type { Engine } from "../engine/engine.js";
import { describeError } from "../util/errors.js";
import { Box } from "./box.js";
import {
  IMAGE_REQUIREMENTS,
  PROBE_SCRIPT,
  parseProbe,
  type RequirementResult,
} from "./image-requirements.js";

/** Every requirement reported missing with the same reason (the probe could not run at all). */
function allMissing(detail: string): RequirementResult[] {
  return IMAGE_REQUIREMENTS.map((requirement) => ({ requirement, ok: false, detail }));
}

/** Runs the probe in a throwaway box made from `image`; the box is removed whatever happens. */
export async function checkImage(engine: Engine, image: string): Promise<RequirementResult[]> {
  let box: Box;
  try {
    box = await Box.create(engine, `doctor-${randomBytes(6).toString("hex")}`, { image });
  } catch (error) {
    // An image whose command cannot start (no sleep, an ENTRYPOINT that exits) never runs.
    return allMissing(
      `the box did not start (${describeError(error)}); drydock runs \`sleep infinity\` as the box's command, which needs sleep on PATH and no ENTRYPOINT in the image`,
    );
  }
  try {
    let output: string;
    try {
      const result = await box.exec(["sh", "-c", PROBE_SCRIPT], { timeoutMs: 60_000 });
      output = result.stdout.toString("utf8");
      if (!output.trim()) {
        const said = (result.stderr.toString("utf8") + output).trim().slice(0, 300);
        return allMissing(
          `the probe could not run: /bin/sh is missing or failed (exit ${result.exitCode}${said ? `: ${said}` : ""})`,
        );
      }
    } catch (error) {
      const running = await box.isRunning().catch(() => false);
      return allMissing(
        running
          ? `the probe could not run: ${describeError(error)}`
          : "the box stopped at once: drydock runs `sleep infinity` as the box's command, which needs sleep on PATH and no ENTRYPOINT in the image",
      );
    }
    return parseProbe(output);
  } finally {
    await box.remove();
  }
}
