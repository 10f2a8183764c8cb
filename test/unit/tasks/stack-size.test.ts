import { describe, expect, it } from "vitest";
import { LimitExceededError } from "../../../src/util/errors.js";
import { newStack } from "./fixtures.js";

describe("the cap on a stack's text", () => {
  it("counts titles and bodies, visible and archived, each once", () => {
    const stack = newStack({ maxStackChars: 100 });
    stack.createTask("a", "x".repeat(40)); // 41
    stack.completeCurrentTask(); // still 41: the archive copy is the same task
    stack.createTask("b", "y".repeat(40)); // 82
    expect(() => stack.createTask("c", "z".repeat(20))).toThrow(LimitExceededError);
    expect(() => stack.createTask("c", "z".repeat(20))).toThrow(
      /holds 82 characters .* add 21 and the limit is 100/,
    );
    stack.createTask("c", "z".repeat(17)); // 100
    expect(() => stack.updateCurrentTask("z".repeat(18))).toThrow(/limit is 100/);
    stack.updateCurrentTask("short"); // shrinking is always allowed
    // Removing an open task frees its text; a removed completed task stays in the archive.
    stack.removeTask("t3");
    stack.removeTask("t1");
    expect(() => stack.createTask("d", "w".repeat(18))).toThrow(/holds 82 characters/);
    expect(() => stack.createTask("d", "w".repeat(17))).not.toThrow();
  });
});
