import { describe, expect, it } from "vitest";
import { LineSplitter } from "../../../src/tools/aider/line-splitter.js";

describe("LineSplitter", () => {
  it("returns whole lines across chunk boundaries and the rest on flush", () => {
    const s = new LineSplitter();
    expect(s.push(Buffer.from("Aider v0.86"))).toEqual([]);
    expect(s.push(Buffer.from(".2\nModel: x\nAppl"))).toEqual(["Aider v0.86.2", "Model: x"]);
    expect(s.flush()).toEqual(["Appl"]);
    expect(s.flush()).toEqual([]);
  });

  it("keeps a multi-byte character split between chunks whole", () => {
    const bytes = Buffer.from("héllo ─\n");
    const s = new LineSplitter();
    const lines = [
      ...s.push(bytes.subarray(0, 2)),
      ...s.push(bytes.subarray(2, 9)),
      ...s.push(bytes.subarray(9)),
    ];
    expect(lines).toEqual(["héllo ─"]);
  });

  it("removes ANSI codes, CRLF endings and carriage-return redraws", () => {
    const s = new LineSplitter();
    expect(s.push("\u001b[32mgreen\u001b[0m\r\nwait 1\rwait 2\rdone\n")).toEqual(["green", "done"]);
  });
});
