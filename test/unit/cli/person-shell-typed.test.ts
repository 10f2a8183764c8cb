import { describe, expect, it } from "vitest";
import { TypedLines } from "../../../src/cli/person-shell-typed.js";

describe("TypedLines", () => {
  it("reads plain typing line by line, with Backspace, Ctrl-U and Ctrl-C as a terminal reads them", () => {
    const t = new TypedLines();
    expect(t.push("ls -a\r")).toEqual([{ command: "ls -a" }]);
    expect(t.push("git statsu\x7f\x7fus\rmake\b\bke test\r")).toEqual([
      { command: "git status" },
      { command: "make test" },
    ]);
    expect(t.push("rm -rf /\x15echo ok\r")).toEqual([{ command: "echo ok" }]);
    expect(t.push("sleep 100\r\x03ü ✓\r")).toEqual([{ command: "sleep 100" }, { command: "ü ✓" }]);
  });

  it("keeps the exact keys of a line the shell's editor may have changed (arrows, Tab, history)", () => {
    const t = new TypedLines();
    expect(t.push("\x1b[A\r")).toEqual([{ command: "", keys: "\x1b[A" }]);
    expect(t.push("git sta\tx\r")).toEqual([{ command: "git stax", keys: "git sta\tx" }]);
    expect(t.push("ls\x1b[Drm\r")).toEqual([{ command: "lsrm", keys: "ls\x1b[Drm" }]);
  });

  it("makes no line of a bare Enter, and one Enter of CR LF", () => {
    const t = new TypedLines();
    expect(t.push("\r\r\n")).toEqual([]);
    expect(t.push("a\r\nb\n")).toEqual([{ command: "a" }, { command: "b" }]);
  });

  it("keeps the newlines of a bracketed paste in the line, split at any point", () => {
    const stream = "\x1b[200~echo 1\recho 2\x1b[201~\r";
    for (let cut = 0; cut <= stream.length; cut++) {
      const t = new TypedLines();
      const lines = [...t.push(stream.slice(0, cut)), ...t.push(stream.slice(cut))];
      expect(lines).toEqual([{ command: "echo 1\necho 2", keys: stream.slice(0, -1) }]);
    }
  });
});
