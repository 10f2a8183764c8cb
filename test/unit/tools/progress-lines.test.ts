import { describe, expect, it } from "vitest";
import { ProgressLines } from "../../../src/tools/progress-lines.js";

describe("ProgressLines", () => {
  it("reports a line only once it is whole, cleaned of terminal sequences", () => {
    const lines = new ProgressLines();
    expect(lines.push("sk-ab")).toEqual([]);
    expect(lines.push("c\x1b[0mdef\nnext")).toEqual(["sk-abcdef"]);
    expect(lines.push("\r\n\n  \nx\rlast\n")).toEqual(["next", "last"]);
    expect(lines.flush()).toEqual([]);
    expect(lines.push("tail without newline")).toEqual([]);
    expect(lines.flush()).toEqual(["tail without newline"]);
  });

  it("cuts a line that never ends and drops the rest of it, keeping memory bounded", () => {
    const lines = new ProgressLines(10);
    expect(lines.push("a".repeat(39))).toEqual([]);
    expect(lines.push("a".repeat(2))).toEqual(["a".repeat(10)]);
    expect(lines.push("b".repeat(1000))).toEqual([]);
    expect(lines.push("b\nc\n")).toEqual(["c"]);
    expect(lines.flush()).toEqual([]);
  });
});
