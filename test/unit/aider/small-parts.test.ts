import { afterEach, describe, expect, it, vi } from "vitest";
import type { ExchangeEvent } from "../../../src/gateway/index.js";
import { aiderProgress } from "../../../src/tools/aider/aider-progress.js";
import { filterModels } from "../../../src/tools/aider/model-catalog.js";
import { UsageTally } from "../../../src/tools/aider/usage-tally.js";
import { parseFinish } from "../../../src/tools/aider/workspace-snapshot.js";

describe("filterModels", () => {
  const models = ["anthropic/claude-sonnet-4-5", "gpt-4o", "gpt-4o-mini", "openai/drydock-offline"];
  it("matches a substring, ignoring case", () => {
    expect(filterModels(models, "GPT-4O")).toEqual(["gpt-4o", "gpt-4o-mini"]);
    expect(filterModels(models, "Sonnet")).toEqual(["anthropic/claude-sonnet-4-5"]);
    expect(filterModels(models, "nothing-like-it")).toEqual([]);
  });
  it("lists everything for an empty or missing substring", () => {
    expect(filterModels(models)).toEqual(models);
    expect(filterModels(models, "  ")).toEqual(models);
  });
});

describe("UsageTally", () => {
  const event = (over: Partial<ExchangeEvent>): ExchangeEvent => ({
    provider: "openai",
    method: "POST",
    path: "/v1/chat/completions",
    status: 200,
    source: "upstream",
    streamed: true,
    inputTokens: 100,
    outputTokens: 10,
    costUsd: 0.5,
    usageEstimated: false,
    durationMs: 3,
    ...over,
  });
  it("adds answered calls and keeps refusals apart", () => {
    const tally = new UsageTally();
    tally.add(event({}));
    tally.add(event({ inputTokens: 50, outputTokens: 5, costUsd: 0.25 }));
    tally.add(
      event({
        status: 400,
        source: "gateway",
        inputTokens: 0,
        outputTokens: 0,
        costUsd: 0,
        refusal: { code: "limit_exceeded", message: "limit reached" },
      }),
    );
    expect(tally.totals()).toEqual({
      requests: 2,
      inputTokens: 150,
      outputTokens: 15,
      costUsd: 0.75,
      refusals: ["limit reached"],
    });
  });
});

describe("parseFinish", () => {
  it("reads the reverted paths (any bytes but NUL) and the diff after them", () => {
    const diff = "diff --git a/a.py b/a.py\n";
    expect(parseFinish(Buffer.from(`2\0test_greet.py\0odd\nname.txt\0${diff}`))).toEqual({
      reverted: ["test_greet.py", "odd\nname.txt"],
      diff,
    });
    expect(parseFinish(Buffer.from(`0\0${diff}`))).toEqual({ reverted: [], diff });
    expect(parseFinish(Buffer.from("0\0"))).toEqual({ reverted: [], diff: "" });
  });
});

describe("aiderProgress", () => {
  afterEach(() => vi.useRealTimers());

  it("reports each non-empty line and a heartbeat when aider is quiet", () => {
    vi.useFakeTimers();
    const messages: string[] = [];
    const progress = aiderProgress((m) => messages.push(m), { heartbeatMs: 1000 });
    progress.onLine("Aider v0.86.2");
    progress.onLine("   ");
    vi.advanceTimersByTime(500);
    expect(messages).toEqual(["starting aider in the box", "Aider v0.86.2"]);
    vi.advanceTimersByTime(1000);
    expect(messages.at(-1)).toMatch(/^aider is still working \(\d+ s\)$/);
    progress.stop();
    const count = messages.length;
    vi.advanceTimersByTime(10_000);
    expect(messages).toHaveLength(count);
  });

  it("stops reporting lines past the cap and shortens long ones", () => {
    const messages: string[] = [];
    const progress = aiderProgress((m) => messages.push(m), { maxLines: 2 });
    progress.onLine("x".repeat(600));
    progress.onLine("b");
    progress.onLine("c");
    progress.stop();
    expect(messages).toEqual(["starting aider in the box", `${"x".repeat(500)}…`, "b"]);
  });
});
