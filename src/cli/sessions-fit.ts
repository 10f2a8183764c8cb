/**
 * The doctor's figure: how many more sessions (at the default limits and reserve) fit on the
 * engine's host now, and why, counting the memory every drydock box there uses.
 */
import { boxMemory } from "../engine/box-memory.js";
import type { Engine } from "../engine/engine.js";
import { LABEL_SESSION } from "../engine/labels.js";
import { DEFAULT_LIMITS } from "../sandbox/box-profile.js";
import { admissionFigure, defaultReserveMiB } from "../server/admission-figure.js";

export async function sessionsFit(
  engine: Engine,
): Promise<{ name: string; ok: boolean; detail: string; fix?: string }> {
  const hostMiB = (await engine.capacity()).memoryMB;
  const running = (await engine.listBoxes(LABEL_SESSION)).filter((b) => b.state === "running");
  const boxes = [
    ...(
      await boxMemory(
        engine,
        running.map((b) => b.id),
      )
    ).values(),
  ];
  const figure = admissionFigure({
    hostMiB,
    reserveMiB: defaultReserveMiB(hostMiB),
    boxes,
    starting: 0,
    newBoxLimitMiB: DEFAULT_LIMITS.memoryMB,
    held: 0,
    owner: "every drydock on this engine",
  });
  return {
    name: "sessions",
    ok: figure.fit > 0,
    detail: figure.why,
    fix:
      figure.fit > 0
        ? undefined
        : "remove sessions no longer needed (drydock sessions list, drydock sessions prune), or serve with a smaller --memory-reserve-mb",
  };
}
