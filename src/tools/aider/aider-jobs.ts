/**
 * Background aider runs: a job id at once, then progress and, when done, the result the call would
 * have returned. Jobs belong to the client that started them; finished ones are kept for a while.
 */
import { randomBytes } from "node:crypto";
import { NotFoundError } from "../../util/errors.js";

export type JobState = "running" | "succeeded" | "failed" | "cancelled";

const RECENT_LINES = 40;

export class AiderJob<R> {
  readonly id = `job-${randomBytes(6).toString("hex")}`;
  readonly startedAt = new Date();
  state: JobState = "running";
  finishedAt: Date | undefined;
  result: R | undefined;
  /** Set when the run threw instead of returning a result. */
  error: string | undefined;
  /** Lines of output so far. */
  lines = 0;
  private readonly recent: string[] = [];
  private readonly controller = new AbortController();

  constructor(
    readonly clientId: string,
    readonly sessionId: string,
  ) {}

  get signal(): AbortSignal {
    return this.controller.signal;
  }

  addLine(line: string): void {
    this.lines += 1;
    this.recent.push(line);
    if (this.recent.length > RECENT_LINES) this.recent.shift();
  }

  /** The last lines of output, oldest first. */
  recentOutput(): string[] {
    return [...this.recent];
  }

  /** Asks a running job to stop; its result then says it was cancelled. */
  cancel(): void {
    if (this.state === "running") this.controller.abort();
  }

  elapsedMs(now = new Date()): number {
    return (this.finishedAt ?? now).getTime() - this.startedAt.getTime();
  }
}

export class AiderJobs<R> {
  private readonly jobs = new Map<string, AiderJob<R>>();

  /** Finished jobs older than keepMs are forgotten, and at most maxFinished are kept. */
  constructor(private readonly limits: { keepMs?: number; maxFinished?: number } = {}) {}

  /**
   * Starts `run` without waiting for it. `succeeded` decides the final state from the result; a
   * throw makes the job failed with the error's message.
   */
  start(
    clientId: string,
    sessionId: string,
    run: (job: AiderJob<R>) => Promise<R>,
    succeeded: (result: R) => boolean,
  ): AiderJob<R> {
    this.prune();
    const job = new AiderJob<R>(clientId, sessionId);
    this.jobs.set(job.id, job);
    void run(job).then(
      (result) => {
        job.result = result;
        job.state = job.signal.aborted ? "cancelled" : succeeded(result) ? "succeeded" : "failed";
        job.finishedAt = new Date();
      },
      (error: unknown) => {
        job.error = error instanceof Error ? error.message : String(error);
        job.state = job.signal.aborted ? "cancelled" : "failed";
        job.finishedAt = new Date();
      },
    );
    return job;
  }

  /** The client's job; another client's job is not found, as if it did not exist. */
  get(clientId: string, jobId: string): AiderJob<R> {
    const job = this.jobs.get(jobId);
    if (!job || job.clientId !== clientId) {
      throw new NotFoundError(
        `job ${jobId} not found: it never existed, belongs to another client, or finished more than an hour ago; start one with aider_ai_code and background: true`,
      );
    }
    return job;
  }

  private prune(now = Date.now()): void {
    const keepMs = this.limits.keepMs ?? 3_600_000;
    const maxFinished = this.limits.maxFinished ?? 200;
    const finished = [...this.jobs.values()].filter((job) => job.finishedAt !== undefined);
    finished.forEach((job, index) => {
      const old = now - (job.finishedAt?.getTime() ?? now) > keepMs;
      if (old || index < finished.length - maxFinished) this.jobs.delete(job.id);
    });
  }
}
