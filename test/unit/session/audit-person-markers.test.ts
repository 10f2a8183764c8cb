import { describe, expect, it } from "vitest";
import { PersonShellMarkers, personShellRc } from "../../../src/cli/person-shell-markers.js";

const NONCE = "0123456789abcdef0123456789abcdef";
const marker = (command: string, status = 0, nonce = NONCE) =>
  `\x1b]7337;${nonce};${status};${Buffer.from(command).toString("base64")}\x07`;

describe("a person's shell's command reports", () => {
  it("takes each report out of the output and returns the command and its status", () => {
    const m = new PersonShellMarkers(NONCE);
    const r = m.push(`hi-42\r\n${marker("echo hi-$((6*7))")}$ ${marker("false ; ls ü", 1)}$ `);
    expect(r.output).toBe("hi-42\r\n$ $ ");
    expect(r.commands).toEqual([
      { command: "echo hi-$((6*7))", exitCode: 0 },
      { command: "false ; ls ü", exitCode: 1 },
    ]);
  });

  it("finds a report split across chunks at any point", () => {
    const stream = `before ${marker("make test", 2)} after`;
    for (let cut = 1; cut < stream.length; cut++) {
      const m = new PersonShellMarkers(NONCE);
      const a = m.push(stream.slice(0, cut));
      const b = m.push(stream.slice(cut));
      expect(a.output + b.output + m.flush()).toBe("before  after");
      expect([...a.commands, ...b.commands]).toEqual([{ command: "make test", exitCode: 2 }]);
    }
  });

  it("shows a report without this shell's nonce as it is and logs nothing for it", () => {
    const m = new PersonShellMarkers(NONCE);
    const forged = marker("rm -rf /", 0, "f".repeat(32));
    expect(m.push(`x${forged}y`)).toEqual({ output: `x${forged}y`, commands: [] });
    const malformed = `\x1b]7337;${NONCE};0;not base64!\x07`;
    expect(m.push(malformed)).toEqual({ output: malformed, commands: [] });
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
