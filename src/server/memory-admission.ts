/**
 * Admission by memory use: measures this server's boxes (every box labelled with this process as
 * its owner: sessions, sessions starting, warm boxes) and works out how many more sessions fit
 * (admission-figure.ts). Callers asking while a measurement is under way share it, so 100 sessions
 * asked for together measure the boxes a few times, not 100 times; a finished one is never reused,
 * so a box that just freed memory is seen to have.
 */
import type { BoxMemory } from "../engine/box-memory.js";
import { boxMemory } from "../engine/box-memory.js";
import type { Engine } from "../engine/engine.js";
import { currentOwner, formatOwner, LABEL_OWNER } from "../engine/labels.js";

export interface MemoryAdmissionOptions {
  /** The engine host's memory. */
  hostMiB: number;
  /** Memory sessions leave free (`--memory-reserve-mb`). */
  reserveMiB: number;
}

export class MemoryAdmission {
  private underWay: Promise<BoxMemory[]> | undefined;

  constructor(
    private readonly engine: Engine,
    readonly options: MemoryAdmissionOptions,
  ) {}

  get hostMiB(): number {
    return this.options.hostMiB;
  }

  get reserveMiB(): number {
    return this.options.reserveMiB;
  }

  /** The memory each running box of this server uses now. */
  boxes(): Promise<BoxMemory[]> {
    this.underWay ??= this.measure().finally(() => (this.underWay = undefined));
    return this.underWay;
  }

  private async measure(): Promise<BoxMemory[]> {
    const listed = await this.engine.listBoxes(LABEL_OWNER, formatOwner(currentOwner()));
    const running = listed.filter((b) => b.state === "running").map((b) => b.id);
    return [...(await boxMemory(this.engine, running)).values()];
  }
}
