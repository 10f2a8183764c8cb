/**
 * Finds and removes boxes left behind: by a drydock process that died (SIGKILL, crash, power
 * loss), or any box at all with `all`. Owners on other hosts are left alone unless `all`.
 */
import type { Engine } from "../engine/engine.js";
import { LABEL_OWNER, LABEL_SESSION, ownerIsDead, parseOwner } from "../engine/labels.js";
import { logger } from "../util/log.js";

const log = logger("prune");

export interface PruneResult {
  removed: string[];
  kept: number;
}

export async function pruneOrphans(engine: Engine, options: { all?: boolean } = {}): Promise<PruneResult> {
  const boxes = await engine.listBoxes(LABEL_SESSION);
  const removed: string[] = [];
  let kept = 0;
  await Promise.all(
    boxes.map(async (box) => {
      const owner = parseOwner(box.labels[LABEL_OWNER]);
      const orphan = options.all || !owner || ownerIsDead(owner);
      if (!orphan) {
        kept++;
        return;
      }
      await engine.remove(box.id);
      removed.push(box.labels[LABEL_SESSION] ?? box.id.slice(0, 12));
    }),
  );
  if (removed.length) log.info(`removed ${removed.length} orphaned box(es): ${removed.join(", ")}`);
  return { removed, kept };
}
