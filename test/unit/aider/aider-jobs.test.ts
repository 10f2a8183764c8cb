import { describe, expect, it } from "vitest";
import { AiderJobs } from "../../../src/tools/aider/aider-jobs.js";
import { NotFoundError } from "../../../src/util/errors.js";

const settle = () => new Promise((resolve) => setTimeout(resolve, 0));

describe("AiderJobs", () => {
  it("runs in the background and reports running, then the result and its state", async () => {
    const jobs = new AiderJobs<{ success: boolean }>();
    let finish: (value: { success: boolean }) => void = () => undefined;
    const job = jobs.start(
      "c1",
      "s1",
      () => new Promise((resolve) => (finish = resolve)),
      (r) => r.success,
    );
    expect(job.state).toBe("running");
    expect(job.id).toMatch(/^job-[0-9a-f]{12}$/);
    finish({ success: false });
    await settle();
    expect(job.state).toBe("failed");
    expect(job.result).toEqual({ success: false });
    expect(job.finishedAt).toBeInstanceOf(Date);
  });

  it("keeps the last lines of output and counts them all", () => {
    const jobs = new AiderJobs<boolean>();
    const job = jobs.start(
      "c",
      "s",
      () => new Promise(() => undefined),
      () => true,
    );
    for (let i = 1; i <= 100; i++) job.addLine(`line ${i}`);
    expect(job.lines).toBe(100);
    expect(job.recentOutput()).toHaveLength(40);
    expect(job.recentOutput().at(-1)).toBe("line 100");
  });

  it("marks a job whose run threw as failed with the message, and a cancelled one as cancelled", async () => {
    const jobs = new AiderJobs<boolean>();
    const broken = jobs.start(
      "c",
      "s",
      async () => {
        throw new Error("box gone");
      },
      () => true,
    );
    const stopped = jobs.start(
      "c",
      "s",
      (job) => new Promise((resolve) => job.signal.addEventListener("abort", () => resolve(false))),
      (ok) => ok,
    );
    stopped.cancel();
    await settle();
    expect(broken).toMatchObject({ state: "failed", error: "box gone" });
    expect(stopped.state).toBe("cancelled");
  });

  it("shows a job only to the client that started it", () => {
    const jobs = new AiderJobs<boolean>();
    const job = jobs.start(
      "alice",
      "s",
      () => new Promise(() => undefined),
      () => true,
    );
    expect(jobs.get("alice", job.id)).toBe(job);
    expect(() => jobs.get("bob", job.id)).toThrow(NotFoundError);
    expect(() => jobs.get("alice", "job-nope")).toThrow(/job job-nope not found.*background: true/);
  });

  it("forgets finished jobs past the limits when new ones start", async () => {
    const jobs = new AiderJobs<boolean>({ maxFinished: 1 });
    const first = jobs.start(
      "c",
      "s",
      async () => true,
      () => true,
    );
    const second = jobs.start(
      "c",
      "s",
      async () => true,
      () => true,
    );
    await settle();
    jobs.start(
      "c",
      "s",
      () => new Promise(() => undefined),
      () => true,
    );
    expect(() => jobs.get("c", first.id)).toThrow(NotFoundError);
    expect(jobs.get("c", second.id)).toBe(second);
  });
});
