import { Writable } from "node:stream";
import { describe, expect, it } from "vitest";
import { defaultConcurrency } from "../../../src/eval/default-concurrency.js";
import { formatElapsed, formatProgress, ProgressLine } from "../../../src/eval/progress-line.js";

function sink(isTTY: boolean) {
  let text = "";
  const stream = Object.assign(
    new Writable({
      write(chunk, _enc, done) {
        text += String(chunk);
        done();
      },
    }),
    { isTTY },
  );
  return { stream, text: () => text };
}

describe("ProgressLine", () => {
  it("formats done / passed / failed / running and the elapsed time", () => {
    expect(formatProgress({ total: 4, done: 2, passed: 1, failed: 1, running: 2 }, 65_000, 4)).toBe(
      "[eval] ██░░ 2/4 done · 1 passed · 1 failed · 2 running · 01:05",
    );
    expect(formatElapsed(3_725_000)).toBe("1:02:05");
  });

  it("in a log, prints a line only when an attempt finishes", () => {
    const out = sink(false);
    const line = new ProgressLine(out.stream);
    line.update({ total: 2, done: 0, passed: 0, failed: 0, running: 1 });
    line.update({ total: 2, done: 0, passed: 0, failed: 0, running: 2 });
    line.update({ total: 2, done: 1, passed: 1, failed: 0, running: 1 });
    line.stop();
    line.stop();
    expect(out.text().trim().split("\n")).toHaveLength(2);
  });

  it("on a terminal, redraws one line and keeps notes above it", () => {
    const out = sink(true);
    const line = new ProgressLine(out.stream);
    line.update({ total: 1, done: 0, passed: 0, failed: 0, running: 1 });
    line.note("[eval] a note");
    line.stop();
    expect(out.text()).toContain("\r\x1b[2K[eval] a note\n");
    expect(out.text().endsWith("0 running · 00:00\n") || out.text().endsWith("1 running · 00:00\n")).toBe(
      true,
    );
  });
});

describe("defaultConcurrency", () => {
  it("is one box per core, fewer when the memory does not hold them, at least one", () => {
    expect(defaultConcurrency(2048, 8, 64 * 1024)).toBe(8);
    expect(defaultConcurrency(2048, 8, 8 * 1024)).toBe(3);
    expect(defaultConcurrency(2048, 2, 1024)).toBe(1);
  });
});
