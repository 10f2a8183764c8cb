import { describe, expect, it } from "vitest";
import { PersonShellMarkers, personShellRc } from "../../../src/cli/person-shell-markers.js";

const NONCE = "0123456789abcdef0123456789abcdef";
const marker = (status = 0, nonce = NONCE) => `\x1b]7337;${nonce};${status}\x07`;

describe("a person's shell's prompt reports", () => {
  it("takes each report out of the output and returns the status it gives, and nothing else", () => {
    const m = new PersonShellMarkers(NONCE);
    const r = m.push(`hi-42\r\n${marker()}$ ü ${marker(1)}$ `);
    expect(r.output).toBe("hi-42\r\n$ ü $ ");
    expect(r.reports).toEqual([{ exitCode: 0 }, { exitCode: 1 }]);
  });

  it("finds a report split across chunks at any point", () => {
    const stream = `before ${marker(2)} after`;
    for (let cut = 1; cut < stream.length; cut++) {
      const m = new PersonShellMarkers(NONCE);
      const a = m.push(stream.slice(0, cut));
      const b = m.push(stream.slice(cut));
      expect(a.output + b.output + m.flush()).toBe("before  after");
      expect([...a.reports, ...b.reports]).toEqual([{ exitCode: 2 }]);
    }
  });

  it("shows a report without this shell's nonce, or in another shape, as it is and takes nothing from it", () => {
    const m = new PersonShellMarkers(NONCE);
    const forged = marker(0, "f".repeat(32));
    expect(m.push(`x${forged}y`)).toEqual({ output: `x${forged}y`, reports: [] });
    // The shape that once carried a command line is no report at all now.
    const old = `\x1b]7337;${NONCE};0;cm0gLXJmIC8=\x07`;
    expect(m.push(old)).toEqual({ output: old, reports: [] });
  });

  it("gives back a held-back beginning at the end of the stream", () => {
    const m = new PersonShellMarkers(NONCE);
    expect(m.push("abc\x1b]73").output).toBe("abc");
    expect(m.flush()).toBe("\x1b]73");
  });

  it("keeps the nonce in a shell variable that is not exported, and reads no file the agent could write", () => {
    const rc = personShellRc(NONCE);
    expect(rc).not.toMatch(/bashrc|\bsource\b|(^|\n)\s*\. /);
    expect(rc).toContain("PROMPT_COMMAND=__drydock_report\n");
    expect(rc).toContain(`__drydock_nonce=${NONCE}\n`);
    expect(rc).not.toMatch(/export[^\n]*__drydock_nonce/);
    expect(() => personShellRc("x; rm -rf /")).toThrow(/nonce/);
  });
});
