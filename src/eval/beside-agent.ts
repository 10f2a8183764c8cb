/**
 * The fresh box an attempt's tests run in, started beside the agent rather than after it: while
 * the agent works in its own box, this one starts from the task's base (a new box with the task's
 * setup, or a fork of the task's prepared box), records its tree, and drydock's count of the tests
 * without the agent's diff is taken there (or, kept once per task base, waited for or reused:
 * base-count-cache.ts). When the agent is done, grading waits only for what is not finished yet,
 * then applies the agent's diff in this box and runs the tests.
 *
 * Nothing the agent writes reaches this box before the count: it is another box, started from the
 * task's repository and image (or the prepared box, which no agent is given), the agent's MCP grant
 * names its own box alone (single-session-access.ts), and the agent's diff is applied only after
 * the count has settled and put the tree back.
 *
 * It takes a box's room on the attempt's engine (EnginePool.tryTake); an attempt that finds no room
 * grades as before, in a box started after the agent. Any failure here (the box, its setup, the
 * count) is not the attempt's: grading then starts a box of its own, as before.
 */
import type { Session } from "../session/session.js";
import { describeError } from "../util/errors.js";
import type { BaseTestCount } from "./base-test-count.js";

export interface BesideReady {
  session: Session;
  /** The tree the tests start from (after setup, before the diff). */
  tree: string;
  /** Its files, as treeFiles lists them. */
  files: Set<string>;
  /** What starting the box printed (its setup), for the test log. */
  log: string;
  /** When the box was set up (Date.now()); the count came after. */
  readyAt: number;
  /** The count of the tests without the agent's diff, with its test-log line. */
  count: BaseTestCount & { log: string };
}

export interface BesideFailed {
  /** Why the box cannot be graded in. */
  error: string;
}

export interface BesideSteps {
  /** Starts the box and runs the task's setup there; throws when either fails. */
  start(signal: AbortSignal): Promise<{ session: Session; log: string }>;
  /** Records the box's tree, and lists its files. */
  tree(session: Session, signal: AbortSignal): Promise<{ tree: string; files: Set<string> }>;
  /** The count for the base of that tree, taken in the box or kept; throws when it could not be taken. */
  count(session: Session, tree: string, signal: AbortSignal): Promise<BaseTestCount & { log: string }>;
  /** Removes a box. */
  destroy(session: Session): Promise<void>;
}

export class BesideAgent {
  private readonly stop = new AbortController();
  private session: Session | undefined;
  private ended = false;
  private released = false;
  /** The box once set up and counted, or why not; never rejects. */
  readonly result: Promise<BesideReady | BesideFailed>;

  /**
   * Starts now. `signal`: the run's; `release` gives back the box's room (once, when it is
   * removed).
   */
  constructor(
    private readonly steps: BesideSteps,
    signal: AbortSignal,
    private readonly release: () => void,
  ) {
    this.result = this.run(AbortSignal.any([signal, this.stop.signal]));
  }

  private async run(signal: AbortSignal): Promise<BesideReady | BesideFailed> {
    try {
      const { session, log } = await this.steps.start(signal);
      this.session = session;
      if (this.ended) throw new Error("the attempt ended");
      const { tree, files } = await this.steps.tree(session, signal);
      const readyAt = Date.now();
      const count = await this.steps.count(session, tree, signal);
      if (signal.aborted) throw new Error("stopped");
      return { session, tree, files, log, readyAt, count };
    } catch (error) {
      await this.remove();
      return { error: describeError(error) };
    }
  }

  /** Ends the work, whatever it reached: stops what still runs, removes the box, gives back its room. */
  async end(): Promise<void> {
    this.ended = true;
    this.stop.abort();
    await this.result;
    await this.remove();
  }

  private async remove(): Promise<void> {
    const session = this.session;
    this.session = undefined;
    if (session) await this.steps.destroy(session).catch(() => undefined);
    if (!this.released) {
      this.released = true;
      this.release();
    }
  }
}
