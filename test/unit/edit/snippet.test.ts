import { describe, expect, it } from "vitest";
import { snippetAround } from "../../../src/tools/edit/snippet.js";

const text = Array.from({ length: 200 }, (_, i) => `l${i + 1}`).join("\n");

describe("snippetAround", () => {
  it("shows four lines of context either side by default", () => {
    const lines = snippetAround(text, 10, 11).split("\n");
    expect(lines[0]).toBe("     6\tl6");
    expect(lines.at(-1)).toBe("    15\tl15");
  });

  it("clamps at the start and end of the file", () => {
    expect(snippetAround(text, 1, 1, 2).split("\n")[0]).toBe("     1\tl1");
    expect(snippetAround(text, 200, 200, 2).split("\n").at(-1)).toBe("   200\tl200");
  });

  it("elides the middle of a long change", () => {
    const snippet = snippetAround(text, 1, 200);
    expect(snippet).toContain("[120 lines not shown]");
    expect(snippet.split("\n")).toHaveLength(81);
  });

  it("is empty for an empty file", () => {
    expect(snippetAround("", 1, 1)).toBe("");
  });
});
