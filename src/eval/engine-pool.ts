/**
 * The engines an eval runs on, with a SessionManager each, and where the next attempt goes: the
 * live engine with the most memory free, counting each running attempt at the memory its box asks
 * for (--memory-mb) against the engine's own total. When no engine has room the attempt waits. An
 * engine that dies is marked so and gets no more attempts.
 *
 * Images reach a Docker engine by being sent from the engine that builds them (`docker save |
 * docker load` through the API) once per engine per image, before the first attempt there.
 * Sending, not building: the image is the same one (same id, so every engine runs the same bytes),
 * and building would need the Debian base and the network for packages on every engine. A
 * Kubernetes namespace is one slot: its scheduler places each box on a node, its capacity is all
 * its nodes', and an image reaches its nodes by its loader (KubernetesEngine.ensureImage).
 */
import type { BoxEngine } from "../engine/box-engine.js";
import { closeEngine, kubernetesBackend } from "../engine/connect-engine.js";
import { Engine } from "../engine/engine.js";
import { SessionManager } from "../session/session-manager.js";

export interface EngineSlot {
  readonly engine: BoxEngine;
  readonly manager: SessionManager;
  /** The engine's host memory, MiB. */
  readonly capacityMB: number;
  /** Memory asked for by the attempts running there, MiB. */
  usedMB: number;
  running: number;
  /** Attempts placed here, retries included. */
  placed: number;
  /** Why the engine is no longer used, once it died. */
  dead?: string;
  readonly images: Map<string, Promise<void>>;
}

type Load = Pick<EngineSlot, "capacityMB" | "usedMB" | "running" | "dead">;

/**
 * Where a box of memoryMB goes: the live engine with the most memory free (fewest running on a
 * tie, then the first given); one running nothing always has room. Undefined when none has room.
 */
export function pickSlot<T extends Load>(slots: readonly T[], memoryMB: number): T | undefined {
  let best: T | undefined;
  for (const s of slots) {
    if (s.dead || (s.running > 0 && s.usedMB + memoryMB > s.capacityMB)) continue;
    const free = s.capacityMB - s.usedMB;
    const bestFree = best ? best.capacityMB - best.usedMB : -Infinity;
    if (!best || free > bestFree || (free === bestFree && s.running < best.running)) best = s;
  }
  return best;
}

/**
 * Whether a second box of memoryMB fits on a slot now, beside what runs there (tryTake): by
 * memory alone, with no exception for an idle engine (the attempt's own box is already there). Pure.
 */
export function fitsBeside(slot: Load, memoryMB: number): boolean {
  return !slot.dead && slot.usedMB + memoryMB <= slot.capacityMB;
}

export class EnginePool {
  private waiters: Array<() => void> = [];

  private constructor(
    readonly slots: EngineSlot[],
    /** The Docker engine images are found and built on, and sent from. */
    readonly images: Engine,
  ) {}

  /** Starts a SessionManager on each engine (which prunes that engine's orphans) and reads its capacity. */
  static async start(engines: BoxEngine[], images: Engine): Promise<EnginePool> {
    const slots = await Promise.all(
      engines.map(async (engine) => ({
        engine,
        manager: await SessionManager.start(engine),
        capacityMB: (await (engine.totalCapacity?.() ?? engine.capacity())).memoryMB,
        usedMB: 0,
        running: 0,
        placed: 0,
        images: new Map<string, Promise<void>>(),
      })),
    );
    return new EnginePool(slots, images);
  }

  live(): EngineSlot[] {
    return this.slots.filter((s) => !s.dead);
  }

  /**
   * Waits for room for a box of memoryMB and takes it on the live engine with the most free
   * memory; undefined once every engine is dead or the signal is aborted. An engine running
   * nothing always has room (the flags already refused a box larger than the engine).
   */
  async acquire(memoryMB: number, signal: AbortSignal): Promise<EngineSlot | undefined> {
    for (;;) {
      if (signal.aborted) return undefined;
      if (this.live().length === 0) return undefined;
      const slot = pickSlot(this.slots, memoryMB);
      if (slot) {
        slot.usedMB += memoryMB;
        slot.running++;
        slot.placed++;
        return slot;
      }
      await new Promise<void>((resolve) => {
        const wake = () => {
          signal.removeEventListener("abort", wake);
          resolve();
        };
        this.waiters.push(wake);
        signal.addEventListener("abort", wake, { once: true });
      });
    }
  }

  /**
   * Takes room for one more box of memoryMB on `slot` now, if the slot has it by pickSlot's rule
   * (its memory, counted at each box's limit), without waiting: for a box an attempt starts beside
   * its own (beside-agent.ts), which is only worth starting when nothing has to wait for it.
   * False when there is no room; release() gives it back.
   */
  tryTake(slot: EngineSlot, memoryMB: number): boolean {
    if (!fitsBeside(slot, memoryMB)) return false;
    slot.usedMB += memoryMB;
    slot.running++;
    return true;
  }

  release(slot: EngineSlot, memoryMB: number): void {
    slot.usedMB -= memoryMB;
    slot.running--;
    this.wake();
  }

  /** Stops placing attempts on the engine. */
  markDead(slot: EngineSlot, why: string): void {
    slot.dead ??= why;
    this.wake();
  }

  private wake(): void {
    const waiters = this.waiters;
    this.waiters = [];
    for (const wake of waiters) wake();
  }

  /** Makes the image present on the slot's engine, sending (or loading) it there once. */
  ensureImage(slot: EngineSlot, ref: string): Promise<void> {
    const target = slot.engine;
    if (target === this.images) return Promise.resolve();
    let sending = slot.images.get(ref);
    if (!sending) {
      sending = (async () => {
        if (!(target instanceof Engine)) {
          const { KubernetesEngine } = await kubernetesBackend();
          if (target instanceof KubernetesEngine) return target.ensureImage(ref);
          throw new Error(`${target.name} cannot be sent images`);
        }
        const [there, here] = await Promise.all([target.imageId(ref), this.images.imageId(ref)]);
        if (there !== undefined && (here === undefined || there === here)) return;
        if (here === undefined) throw new Error(`${this.images.name} has no image ${ref} to send`);
        await this.images.sendImage(ref, target);
      })();
      // A failed send is tried again by the next attempt there, not remembered.
      sending.catch(() => slot.images.delete(ref));
      slot.images.set(ref, sending);
    }
    return sending;
  }

  /** Removes every box on every live engine (a dead one's are left to its next prune), and releases each. */
  async closeAll(): Promise<void> {
    await Promise.allSettled(
      this.slots.map(async (s) => {
        await (s.dead
          ? Promise.race([s.manager.closeAll(), new Promise((r) => setTimeout(r, 5_000).unref())])
          : s.manager.closeAll());
        await closeEngine(s.engine);
      }),
    );
  }
}

/**
 * Why an engine counts as gone, or undefined while it answers: three pings a second apart all
 * failed (one slow answer on a loaded machine is no death).
 */
export async function engineDied(slot: EngineSlot, tries = 3): Promise<string | undefined> {
  for (let i = 0; i < tries; i++) {
    if (i > 0) await new Promise((resolve) => setTimeout(resolve, 1_000));
    if (await slot.engine.answers()) return undefined;
  }
  return `${slot.engine.name} stopped answering`;
}
