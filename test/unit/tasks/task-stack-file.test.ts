import { describe, expect, it } from "vitest";
import { decodeTaskStackFile, encodeTaskStackFile } from "../../../src/tasks/task-stack-file.js";
import { newStack } from "./fixtures.js";

function sampleState() {
  const s = newStack();
  s.createTask("root", 'body with "quotes", unicode ✓ and\nnewlines');
  s.createTask("child", "");
  s.completeCurrentTask();
  return s.toState();
}

const savedAt = new Date("2026-02-03T04:05:06.000Z");

describe("task stack files", () => {
  it("decode what encode wrote", () => {
    const state = sampleState();
    expect(decodeTaskStackFile(encodeTaskStackFile("s1", state, savedAt))).toEqual({
      ok: true,
      sessionId: "s1",
      savedAt: "2026-02-03T04:05:06.000Z",
      state,
    });
  });

  it("detect a file cut short at any point", () => {
    const text = encodeTaskStackFile("s1", sampleState(), savedAt);
    for (let length = 0; length < text.trimEnd().length; length += 7) {
      const decoded = decodeTaskStackFile(text.slice(0, length));
      expect(decoded.ok, `cut at ${length}`).toBe(false);
    }
  });

  it("detect an edited state by its checksum", () => {
    const text = encodeTaskStackFile("s1", sampleState(), savedAt).replace('"root"', '"r00t"');
    expect(decodeTaskStackFile(text)).toEqual({
      ok: false,
      problem: "checksum mismatch: the file was changed or only partly written",
    });
  });

  it("refuse JSON that is not a stack file", () => {
    expect(decodeTaskStackFile('{"tasks": []}')).toMatchObject({
      ok: false,
      problem: /not a drydock task stack/,
    });
  });

  it("refuse a state whose checksum matches but whose rules are broken", () => {
    const state = { ...sampleState(), currentTaskId: "t9" };
    expect(decodeTaskStackFile(encodeTaskStackFile("s1", state, savedAt))).toMatchObject({
      ok: false,
      problem: /inconsistent task data .*t9/,
    });
  });
});
