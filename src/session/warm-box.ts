/**
 * One box of a warm pool, made ahead of time: started with its shell live, prefilled with the
 * served repository's commit when the pool has one, its copy-in receiver attached and its file
 * channel answering, so a session on it pays for no exec start. Labelled like any session's box
 * plus the pool label, so it ends with drydock and the next start removes it after a crash.
 */
import { rm } from "node:fs/promises";
import type { BoxEngine } from "../engine/box-engine.js";
import { LABEL_KEPT_UNTIL, LABEL_POOL, keptUntilLabel } from "../engine/labels.js";
import type { Box } from "../sandbox/box.js";
import { openBoxChannel } from "../sandbox/box-channel.js";
import type { PtyShell } from "../sandbox/pty-shell.js";
import { describeError } from "../util/errors.js";
import { logger } from "../util/log.js";
import { prefillBox, type Prefilled } from "../workspace/box-workspace.js";
import { SnapshotReceiver } from "../workspace/snapshot-receiver.js";
import type { PoolProfile } from "./pool-fit.js";
import { createSessionBox, startSessionShell } from "./session-box.js";
import { newSessionId } from "./session-id.js";

const log = logger("pool");

/** A box ready for a session: its id is the session's id. */
export interface WarmBox {
  sessionId: string;
  box: Box;
  shell: PtyShell;
  gatewayDir: string;
  receiver: SnapshotReceiver;
  /** What the box holds already, when the pool prefills its boxes. */
  prefilled?: Prefilled;
  /** When the box's keeping ends (epoch ms; its kept-until label), for a pool of kept sessions. */
  keptUntil?: number;
}

/** What a pool makes its boxes from. */
export interface WarmBoxRecipe {
  profile: PoolProfile;
  /** How long the box may wait idle: its receiver waits that long plus a copy-in's time. */
  ttlMs: number;
  /** The repository whose current commit the box holds (see `prefillBox`). */
  prefillRepo?: string;
  /** Kept sessions (`--keep-sessions`): the box is labelled kept for its idle time plus this. */
  keepTtlMs?: number;
}

/**
 * Makes a warm box; undefined when `stopped()` turned true on the way (the pool closing): the
 * box is then removed at its next step rather than made in full. Leaves nothing on failure.
 */
export async function makeWarmBox(
  engine: BoxEngine,
  recipe: WarmBoxRecipe,
  stopped: () => boolean,
): Promise<{ warm: WarmBox } | undefined> {
  const sessionId = newSessionId();
  const kept = recipe.keepTtlMs === undefined ? undefined : keptUntilLabel(recipe.keepTtlMs + recipe.ttlMs);
  const labels = { [LABEL_POOL]: "warm", ...(kept ? { [LABEL_KEPT_UNTIL]: kept } : {}) };
  const { box, gatewayDir } = await createSessionBox(engine, sessionId, { ...recipe.profile, labels });
  let shell: PtyShell | undefined;
  let receiver: SnapshotReceiver | undefined;
  const removeAll = async () => {
    receiver?.close();
    await shell?.dispose();
    await box.remove().catch(() => undefined);
    await rm(gatewayDir, { recursive: true, force: true });
  };
  try {
    if (stopped()) return void (await removeAll());
    shell = await startSessionShell(box);
    if (stopped()) return void (await removeAll());
    const prefilled =
      recipe.prefillRepo === undefined
        ? undefined
        : await prefillBox(box, recipe.prefillRepo, SnapshotReceiver.open(box));
    if (stopped()) return void (await removeAll());
    receiver = SnapshotReceiver.open(box, { timeoutMs: recipe.ttlMs + 600_000 });
    const keptUntil = kept === undefined ? undefined : Number(kept) * 1000;
    const warm: WarmBox = { sessionId, box, shell, gatewayDir, receiver, prefilled, keptUntil };
    // Idle means ready: the receiver's exec is attached and the file tools' channel answers,
    // so a take pays for no exec start, and the session's first file operation for none either.
    await Promise.all([receiver.ready, openBoxChannel(box)]);
    if (stopped()) return void (await removeAll());
    return { warm };
  } catch (error) {
    await removeAll();
    throw error;
  }
}

/** Removes a warm box that will not serve a session, and everything that came with it. */
export async function disposeWarmBox(warm: WarmBox): Promise<void> {
  warm.receiver.close();
  await warm.shell.dispose();
  await warm.box
    .remove()
    .catch((error) => log.warn(`removing box ${warm.box.shortId}: ${describeError(error)}`));
  await rm(warm.gatewayDir, { recursive: true, force: true });
}
