import { describe, expect, it } from "vitest";
import { formatLlmMode, parseLlmMode } from "../../../src/gateway/llm-mode.js";
import { InvalidArgumentError } from "../../../src/util/errors.js";

describe("parseLlmMode", () => {
  it("reads live, offline, record:FILE and replay:FILE, resolving files against cwd", () => {
    expect(parseLlmMode("live")).toEqual({ kind: "live" });
    expect(parseLlmMode(" offline ")).toEqual({ kind: "offline" });
    expect(parseLlmMode("record:runs/a.jsonl", "/work")).toEqual({
      kind: "record",
      file: "/work/runs/a.jsonl",
    });
    expect(parseLlmMode("replay:/abs/b.jsonl", "/work")).toEqual({ kind: "replay", file: "/abs/b.jsonl" });
    expect(parseLlmMode("replay:C:x.jsonl", "/w")).toEqual({ kind: "replay", file: "/w/C:x.jsonl" });
  });

  it("round-trips through formatLlmMode", () => {
    for (const spec of ["live", "offline", "record:/a/b.jsonl", "replay:/c.jsonl"]) {
      expect(formatLlmMode(parseLlmMode(spec))).toBe(spec);
    }
  });

  it.each([
    ["", /"" is not a mode; use live, offline, record:FILE or replay:FILE/],
    ["Live", /"Live" is not a mode/],
    ["record", /"record" is not a mode/],
    ["record:", /record: needs a file, e\.g\. record:llm-exchanges\.jsonl/],
    ["replay:   ", /replay: needs a file/],
    ["playback:x.jsonl", /unknown mode "playback" in "playback:x\.jsonl"/],
  ])("refuses %j, naming --llm and the forms it takes", (spec, message) => {
    let caught: unknown;
    try {
      parseLlmMode(spec);
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(InvalidArgumentError);
    expect((caught as InvalidArgumentError).field).toBe("--llm");
    expect((caught as Error).message).toMatch(message);
  });
});
