import { describe, expect, it } from "vitest";
import { hasTerminalControls, terminalLine, terminalText } from "../../../src/util/terminal-text.js";

describe("terminalText", () => {
  it("keeps plain text, newlines, tabs and non-ASCII letters", () => {
    expect(terminalText("pytest -q\n\tok é 日本")).toBe("pytest -q\n\tok é 日本");
    expect(hasTerminalControls("pytest -q\n\tok")).toBe(false);
  });

  it("escapes ESC sequences: screen clear, title change, OSC 52 clipboard write", () => {
    expect(terminalText("a\x1b[2Jb")).toBe("a\\e[2Jb");
    expect(terminalText("\x1b]0;owned\x07")).toBe("\\e]0;owned\\x07");
    expect(terminalText("\x1b]52;c;ZWNobyBoaQ==\x1b\\")).toBe("\\e]52;c;ZWNobyBoaQ==\\e\\");
    expect(terminalText("x\x1b[2J")).not.toMatch(/\x1b/);
  });

  it("escapes a lone CR that would draw over the line, BEL, backspace and DEL", () => {
    expect(terminalText("rm -rf /\rls -l   ")).toBe("rm -rf /\\rls -l   ");
    expect(terminalText("\x07\x08\x7f")).toBe("\\x07\\x08\\x7f");
  });

  it("escapes C1 controls (a one-character CSI) and bidi overrides and isolates", () => {
    expect(terminalText("\u009b2J")).toBe("\\x9b2J");
    expect(terminalText("a\u202eb\u2066c\u2069\u200f")).toBe("a\\u202eb\\u2066c\\u2069\\u200f");
    expect(hasTerminalControls("\u202e")).toBe(true);
  });

  it("terminalLine escapes newlines and tabs as well", () => {
    expect(terminalLine("a\nb\tc\x1b")).toBe("a\\nb\\tc\\e");
  });
});
