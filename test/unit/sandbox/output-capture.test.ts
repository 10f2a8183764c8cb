import stripAnsi from "strip-ansi";
import { describe, expect, it } from "vitest";
import { CommandOutput, cleanTerminalText } from "../../../src/sandbox/output-capture.js";

/** cleanTerminalText's passes, each run whatever the text holds: the oracle for its shortcut. */
function everyPass(text: string): string {
  return stripAnsi(text)
    .replace(/\r\n/g, "\n")
    .replace(/^.*\r(?!$)/gm, "")
    .replace(/\r/g, "")
    .replace(/[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]/g, "");
}

describe("cleanTerminalText", () => {
  it("gives what every pass gives, for each code point up to U+00FF and each ANSI introducer", () => {
    for (let code = 0; code <= 0xff; code++) {
      const c = String.fromCharCode(code);
      for (const text of [`a${c}b`, `a${c}[31mred${c}[0m`, `x${c}]0;title\x07y`, `${c}`, `line\n${c}\n`]) {
        expect(cleanTerminalText(text), `U+${code.toString(16)} in ${JSON.stringify(text)}`).toBe(
          everyPass(text),
        );
      }
    }
    expect(cleanTerminalText("\x1b[1mbold\x1b[0m 50%\r100%\r\n")).toBe("100%\n");
    expect(cleanTerminalText("\x9b31mred")).toBe("red");
  });

  it("returns plain text as it is", () => {
    const plain = "tab\there, é and ✓, a line\n".repeat(1000);
    expect(cleanTerminalText(plain)).toBe(plain);
  });
});

describe("CommandOutput", () => {
  it("gives the merged text as stdout's when nothing came on stderr, cut or not", () => {
    for (const size of [10, 5_000]) {
      const out = new CommandOutput(1_000);
      out.push("stdout", Buffer.from("x".repeat(size) + "\x1b[0m\n"));
      const texts = out.texts();
      expect(texts.merged).toBe(texts.stdout);
      expect(texts.merged).toBe(out.merged.text());
      expect(texts.stderr).toBe("");
    }
  });

  it("keeps the arrival order in the merged text when both streams printed", () => {
    const out = new CommandOutput(1_000);
    out.push("stdout", Buffer.from("one\n"));
    out.push("stderr", Buffer.from("two\n"));
    out.push("stdout", Buffer.from("three\n"));
    expect(out.texts()).toEqual({ stdout: "one\nthree\n", stderr: "two\n", merged: "one\ntwo\nthree\n" });
  });
});
