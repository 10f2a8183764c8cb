import { describe, expect, it } from "vitest";
import { SequentialThinking, type ThoughtInput } from "../../../src/tools/thinking/sequential-thinking.js";
import { InvalidArgumentError, LimitExceededError } from "../../../src/util/errors.js";
import { parseArgs } from "../../../src/tools/parse-args.js";
import { sequentialThinkingTool } from "../../../src/tools/thinking-tool.js";

const step = (n: number, extra: Partial<ThoughtInput> = {}): ThoughtInput => ({
  thought: `step ${n}`,
  thought_number: n,
  total_thoughts: 3,
  next_thought_needed: true,
  ...extra,
});

describe("SequentialThinking", () => {
  it("records thoughts and answers like the reference server", () => {
    const thinking = new SequentialThinking();
    thinking.record(step(1));
    expect(thinking.record(step(2, { next_thought_needed: false }))).toEqual({
      thoughtNumber: 2,
      totalThoughts: 3,
      nextThoughtNeeded: false,
      branches: [],
      thoughtHistoryLength: 2,
    });
  });

  it("takes next_thought_needed as optional: more thoughts follow until thought_number reaches total_thoughts", () => {
    const args = { thought: "a", thought_number: 1, total_thoughts: 2 };
    expect(() => parseArgs(sequentialThinkingTool.inputSchema, args, "sequential_thinking")).not.toThrow();
    const thinking = new SequentialThinking();
    const first = { thought: "a", thought_number: 1, total_thoughts: 2 };
    expect(thinking.record(first).nextThoughtNeeded).toBe(true);
    expect(thinking.record({ ...first, thought_number: 2 }).nextThoughtNeeded).toBe(false);
    const more = { ...first, thought_number: 3, needs_more_thoughts: true };
    expect(thinking.record(more).nextThoughtNeeded).toBe(true);
    expect(
      thinking.record({ ...first, thought_number: 4, next_thought_needed: false }).nextThoughtNeeded,
    ).toBe(false);
  });

  it("raises total_thoughts when the thinking runs past it", () => {
    const thinking = new SequentialThinking();
    for (const n of [1, 2, 3]) thinking.record(step(n));
    expect(thinking.record(step(4, { needs_more_thoughts: true })).totalThoughts).toBe(4);
    expect(thinking.history.at(-1)).toMatchObject({ totalThoughts: 4, needsMoreThoughts: true });
  });

  it("records revisions of earlier thoughts", () => {
    const thinking = new SequentialThinking();
    thinking.record(step(1));
    thinking.record(step(2));
    thinking.record(step(3, { is_revision: true, revises_thought: 1 }));
    expect(thinking.history.at(-1)).toMatchObject({ isRevision: true, revisesThought: 1 });
  });

  it("treats revises_thought without is_revision as a revision", () => {
    const thinking = new SequentialThinking();
    thinking.record(step(1));
    thinking.record(step(2, { revises_thought: 1 }));
    expect(thinking.history.at(-1)?.isRevision).toBe(true);
  });

  it("keeps branches and lists them in the summary", () => {
    const thinking = new SequentialThinking();
    thinking.record(step(1));
    thinking.record(step(2));
    thinking.record(step(3, { branch_from_thought: 2, branch_id: "plan-b" }));
    const summary = thinking.record(step(4, { branch_id: "plan-b" }));
    thinking.record(step(3, { branch_from_thought: 1, branch_id: "plan-c" }));
    expect(summary.branches).toEqual(["plan-b"]);
    expect(thinking.branchIds).toEqual(["plan-b", "plan-c"]);
    expect(thinking.branch("plan-b").map((t) => t.thoughtNumber)).toEqual([3, 4]);
    expect(thinking.branch("unknown")).toEqual([]);
  });

  it.each<[string, Partial<ThoughtInput>, RegExp]>([
    ["an empty thought", { thought: "  " }, /^thought: is empty/],
    ["a fractional number", { thought_number: 1.5 }, /^thought_number: must be a whole number/],
    ["a zero total", { total_thoughts: 0 }, /^total_thoughts: must be a whole number/],
    [
      "a next flag that is not a boolean",
      { next_thought_needed: "yes" as unknown as boolean },
      /^next_thought_needed: must be true .* or left out/,
    ],
    [
      "a revision without its target",
      { is_revision: true },
      /^revises_thought: is required when is_revision is true/,
    ],
    [
      "a contradiction",
      { is_revision: false, revises_thought: 1 },
      /^is_revision: is false but revises_thought is set/,
    ],
    ["revising a later thought", { revises_thought: 3 }, /^revises_thought: 3 is not an earlier thought/],
    ["revising itself", { revises_thought: 2 }, /^revises_thought: 2 is not an earlier thought/],
    [
      "revising an unrecorded thought",
      { thought_number: 9, revises_thought: 5 },
      /^revises_thought: 5 refers to no recorded thought \(recorded: 1\)/,
    ],
    [
      "a branch without an id",
      { branch_from_thought: 1 },
      /^branch_id: is required with branch_from_thought/,
    ],
    [
      "a new branch without its origin",
      { branch_id: "x" },
      /^branch_from_thought: is required to start branch "x"/,
    ],
    [
      "a branch from the future",
      { branch_from_thought: 5, branch_id: "x" },
      /^branch_from_thought: 5 is not an earlier thought/,
    ],
    ["a blank branch id", { branch_from_thought: 1, branch_id: " " }, /^branch_id: must be a name/],
    [
      "a branch id with control characters",
      { branch_from_thought: 1, branch_id: "a\nb" },
      /^branch_id: must be a name/,
    ],
  ])("refuses %s and records nothing", (_, extra, message) => {
    const thinking = new SequentialThinking();
    thinking.record(step(1));
    const attempt = () => thinking.record(step(2, extra));
    expect(attempt).toThrow(InvalidArgumentError);
    expect(attempt).toThrow(message);
    expect(thinking.history).toHaveLength(1);
  });

  it("refuses an oversized thought", () => {
    const thinking = new SequentialThinking({ maxThoughtChars: 100 });
    expect(() => thinking.record({ ...step(1), thought: "x".repeat(101) })).toThrow(
      /over the 100 limit; split it/,
    );
  });

  it("keeps only the newest thoughts past the bound", () => {
    const thinking = new SequentialThinking({ maxThoughts: 5 });
    for (let n = 1; n <= 12; n++) thinking.record(step(n));
    expect(thinking.history.map((t) => t.thoughtNumber)).toEqual([8, 9, 10, 11, 12]);
    expect(thinking.record(step(13)).thoughtHistoryLength).toBe(5);
    expect(() => thinking.record(step(14, { revises_thought: 2 }))).toThrow(
      /refers to no recorded thought \(recorded: 9, 10/,
    );
  });

  it("bounds the number of branches", () => {
    const thinking = new SequentialThinking({ maxBranches: 2 });
    thinking.record(step(1));
    thinking.record(step(2, { branch_from_thought: 1, branch_id: "a" }));
    thinking.record(step(2, { branch_from_thought: 1, branch_id: "b" }));
    expect(() => thinking.record(step(2, { branch_from_thought: 1, branch_id: "c" }))).toThrow(
      LimitExceededError,
    );
    expect(thinking.record(step(3, { branch_id: "a" })).branches).toEqual(["a", "b"]);
  });

  it("keeps unicode thoughts as written", () => {
    const thinking = new SequentialThinking();
    thinking.record({ ...step(1), thought: "Überlegung 🤔 — 思考" });
    expect(thinking.history[0]?.thought).toBe("Überlegung 🤔 — 思考");
  });
});
