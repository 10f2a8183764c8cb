/**
 * drydock's count of a task's tests without the agent's diff (base-test-count.ts) depends on the
 * task's base alone: the repository and commit (as the tree the tests start from, after setup),
 * the test patch, the test command, the setup and the image. It is taken once per base and reused:
 * by every attempt of the run (`--attempts 5` counts once; attempts that reach it while it runs wait
 * for it), and by later runs, shards and resumes on this machine through a file per base in the
 * state directory (`<state>/cache/eval-base-counts/`). Each test log says whether its attempt ran
 * the count or which one did.
 *
 * A count that ran out of its time limit, was stopped, or failed is not written for later runs.
 * The files are written by drydock on the host, never by a box.
 */
import { createHash } from "node:crypto";
import { mkdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import { writeFileAtomic } from "../util/write-atomic.js";
import type { BaseTestCount } from "./base-test-count.js";

/** What a count depends on. */
export interface BaseKeyParts {
  /** The task's repository as the task names it (a host path or a URL). */
  repo: string;
  ref?: string;
  /** The git tree the tests start from (after setup, before the agent's diff). */
  tree: string;
  testPatch?: string;
  testCmd: string;
  setup?: string;
  /** The image's id when the engine says, else its name. */
  image: string;
}

const KEY_VERSION = 1;

/** A key of a task's base. Pure. */
export function baseCountKey(parts: BaseKeyParts): string {
  const fields = [
    KEY_VERSION,
    parts.repo,
    parts.ref ?? "",
    parts.tree,
    parts.testPatch ?? "",
    parts.testCmd,
    parts.setup ?? "",
    parts.image,
  ];
  return createHash("sha256").update(JSON.stringify(fields)).digest("hex").slice(0, 32);
}

/** A count as kept: the count and who took it. */
export interface KeptCount extends BaseTestCount {
  /** The run (its id) and attempt (`task#n`) that ran the count. */
  run_id: string;
  attempt: string;
  counted_at: string;
}

export interface BaseCountOutcome {
  count: BaseTestCount;
  /** One phrase for the test log: whether this attempt ran the count, or which run and attempt did. */
  origin: string;
}

/** Kept counts; undefined for a count that could not be taken (it failed or was stopped). */
export class BaseCounts {
  private readonly inRun = new Map<string, Promise<KeptCount | undefined>>();

  /**
   * @param runId the run's id, recorded with each count it takes.
   * @param dir where counts are kept for later runs; none keeps them for this run only.
   */
  constructor(
    private readonly runId: string,
    private readonly dir?: string,
  ) {}

  /**
   * The count of the base `key`: kept by this run or an earlier one, else taken now by `count`
   * (for `attempt`, "task#n"). An attempt that finds the count being taken waits for it.
   */
  async get(key: string, attempt: string, count: () => Promise<BaseTestCount>): Promise<BaseCountOutcome> {
    const pending = this.inRun.get(key);
    if (pending) {
      const kept = await pending.catch(() => undefined);
      if (kept) return { count: strip(kept), origin: this.origin(kept) };
    }
    if (!pending && this.dir) {
      const kept = await this.read(key);
      if (kept) {
        this.inRun.set(key, Promise.resolve(kept));
        return { count: strip(kept), origin: this.origin(kept) };
      }
    }
    const taking = (async (): Promise<KeptCount | undefined> => {
      const counted = await count();
      return { ...counted, run_id: this.runId, attempt, counted_at: new Date().toISOString() };
    })();
    this.inRun.set(
      key,
      taking.catch(() => undefined),
    );
    let kept: KeptCount | undefined;
    try {
      kept = await taking;
    } catch (error) {
      // The next attempt that needs it takes it again.
      this.inRun.delete(key);
      throw error;
    }
    if (kept && this.dir && !kept.timedOut) await this.write(key, kept).catch(() => undefined);
    return {
      count: strip(kept),
      origin: `counted by this attempt; ${this.dir ? "kept for the task's other attempts and later runs" : "kept for the task's other attempts"}`,
    };
  }

  /**
   * Forgets a count this run kept that ran out of its time limit, so that the next get takes it
   * again (a count beside an agent that was slowed down by it is taken again once it is gone).
   */
  async forgetTimedOut(key: string): Promise<void> {
    const pending = this.inRun.get(key);
    const kept = await pending?.catch(() => undefined);
    if (kept?.timedOut && this.inRun.get(key) === pending) this.inRun.delete(key);
  }

  /** Forgets a count this run took (an attempt stopped while taking it). */
  forget(key: string): void {
    this.inRun.delete(key);
  }

  private origin(kept: KeptCount): string {
    const by =
      kept.run_id === this.runId
        ? `attempt ${kept.attempt} of this run`
        : `attempt ${kept.attempt} of run ${kept.run_id}`;
    return `counted by ${by} at ${kept.counted_at}; not run again`;
  }

  private file(key: string): string {
    return join(this.dir!, `${key}.json`);
  }

  private async read(key: string): Promise<KeptCount | undefined> {
    try {
      const kept = JSON.parse(await readFile(this.file(key), "utf8")) as Partial<KeptCount>;
      const valid =
        typeof kept.run_id === "string" &&
        typeof kept.attempt === "string" &&
        typeof kept.counted_at === "string" &&
        (kept.count === undefined || (Number.isInteger(kept.count) && kept.count >= 0)) &&
        (kept.count !== undefined || typeof kept.note === "string") &&
        !kept.timedOut;
      return valid ? (kept as KeptCount) : undefined;
    } catch {
      return undefined;
    }
  }

  private async write(key: string, kept: KeptCount): Promise<void> {
    await mkdir(this.dir!, { recursive: true, mode: 0o700 });
    await writeFileAtomic(this.file(key), JSON.stringify(kept, null, 2) + "\n");
  }
}

function strip(kept: KeptCount | undefined): BaseTestCount {
  if (!kept) return { note: "the count could not be taken" };
  const { run_id: _r, attempt: _a, counted_at: _c, ...count } = kept;
  return count;
}
