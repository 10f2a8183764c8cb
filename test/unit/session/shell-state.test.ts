import { describe, expect, it } from "vitest";
import {
  CAPTURE_COMMAND,
  RESTORE_COMMAND,
  parseShellState,
  shellStateCwd,
  shellStateFile,
} from "../../../src/session/shell-state.js";
import { MAX_SHELL_STATE_FILE_BYTES } from "../../../src/workspace/checkpoint-script.js";
import { LimitExceededError } from "../../../src/util/errors.js";

const nul = Buffer.from([0]);
const file = (...parts: (string | Buffer)[]) =>
  Buffer.concat(parts.flatMap((p) => [Buffer.isBuffer(p) ? p : Buffer.from(p), nul]));

describe("the shell's state as the shell writes it", () => {
  it("keeps every byte, drops the frame's own variable (both ways bash writes it), and writes back what it read", () => {
    const exports = Buffer.concat([
      Buffer.from('declare -x A="1"\ndeclare -x DRYDOCK_COMMAND="x1"\nexport DRYDOCK_COMMAND=x2\n'),
      Buffer.from('declare -x BIN="'),
      Buffer.from([0xff, 0xfe, 0x1b, 0x9b]),
      Buffer.from('"\ndeclare -x ML="line1\nDRYDOCK_COMMAND\nline3"\n'),
    ]);
    const raw = file("/workspace/a\nb'c", "A\nBIN\nDRYDOCK_COMMAND\nML\n", exports);
    const state = parseShellState(raw);
    expect(shellStateCwd(state)).toBe("/workspace/a\nb'c");
    expect(Buffer.from(state.names, "base64").toString()).toBe("A\nBIN\nML\n");
    const kept = Buffer.from(state.exports, "base64");
    expect(kept.includes(Buffer.from("x1"))).toBe(false);
    expect(kept.includes(Buffer.from("x2"))).toBe(false);
    expect(kept.includes(Buffer.from([0xff, 0xfe, 0x1b, 0x9b]))).toBe(true);
    // A line of a value that is only the name is not an export of it: kept.
    expect(kept.toString("latin1")).toContain("line1\nDRYDOCK_COMMAND\nline3");
    // Written back: the same three parts, each ended by NUL.
    expect(parseShellState(shellStateFile(state))).toEqual(state);
  });

  it("refuses a file not written whole, and one over the limit, naming the limit", () => {
    expect(() => parseShellState(Buffer.from("/workspace\0A\n"))).toThrow(/not written whole/);
    expect(() => parseShellState(Buffer.alloc(0))).toThrow(/not written whole/);
    const big = file("/workspace", "A\n", `declare -x A="${"x".repeat(MAX_SHELL_STATE_FILE_BYTES)}"\n`);
    expect(() => parseShellState(big)).toThrow(LimitExceededError);
    expect(() => parseShellState(big)).toThrow(/exported variables take more than 512 KiB/);
    // Just under the cap: kept.
    const under = file("/workspace", "A\n", "y".repeat(MAX_SHELL_STATE_FILE_BYTES - 100));
    expect(Buffer.from(parseShellState(under).exports, "base64").length).toBe(
      MAX_SHELL_STATE_FILE_BYTES - 100,
    );
  });

  it("reads and writes the file with builtins only: no program the agent could shadow", () => {
    for (const command of [CAPTURE_COMMAND, RESTORE_COMMAND]) {
      expect(command).not.toMatch(/base64|grep|\bcat\b|command \//);
    }
  });
});
