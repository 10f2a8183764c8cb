import { execFileSync } from "node:child_process";
import { describe, expect, it } from "vitest";
import {
  parseScriptOutput,
  READ_RANGE_SCRIPT,
  scriptCommand,
  shellWord,
} from "../../../src/library/remote-box-script.js";
import { EXIT } from "../../../src/tools/box-file-scripts.js";

/** Runs `line` as the bash tool would: in a shell that already has the given options set. */
function inShell(options: string, line: string): string {
  return execFileSync("bash", ["-c", `${options}\n${line}\necho SHELL-STILL-HERE`], {
    encoding: "utf8",
    stdio: ["ignore", "pipe", "pipe"],
  });
}

describe("scriptCommand", () => {
  it("returns the script's stdout as base64 and its exit status, any bytes and quotes intact", () => {
    const script = `printf '%s\\0' "$1"; printf '\\r\\n\\x1b[31mred\\xff'; exit 7`;
    const arg = `it's "quoted" $HOME \`x\``;
    const out = inShell("", scriptCommand(script, [arg]));
    const parsed = parseScriptOutput(out.replace("SHELL-STILL-HERE\n", ""));
    expect(parsed?.exitCode).toBe(7);
    expect(parsed?.data).toEqual(
      Buffer.concat([
        Buffer.from(arg),
        Buffer.from([0]),
        Buffer.from("\r\n\x1b[31mred"),
        Buffer.from([0xff]),
      ]),
    );
  });

  it("neither ends a shell with set -e and pipefail nor lets them change the status", () => {
    const out = inShell("set -e -o pipefail", scriptCommand("exit 92", []));
    expect(out).toMatch(/SHELL-STILL-HERE/);
    expect(parseScriptOutput(out.replace("SHELL-STILL-HERE\n", ""))).toEqual({
      data: Buffer.alloc(0),
      exitCode: 92,
    });
  });

  it("reads a range of a file with the refusals of the in-process scripts", () => {
    // Outside /workspace on this machine: the same refusal a box gives for a path leaving it.
    const out = inShell("", scriptCommand(READ_RANGE_SCRIPT, ["/etc/hostname", "0", "10"]));
    expect(parseScriptOutput(out.replace("SHELL-STILL-HERE\n", ""))?.exitCode).toBe(EXIT.OUTSIDE);
  });
});

describe("parseScriptOutput", () => {
  it("takes terminal line endings and refuses what is not base64 and a status", () => {
    expect(parseScriptOutput("aGk=\r\n0\r\n")).toEqual({ data: Buffer.from("hi"), exitCode: 0 });
    expect(parseScriptOutput("bash: base64: command not found\n127\n")).toBeUndefined();
    expect(parseScriptOutput("")).toBeUndefined();
  });

  it("shellWord quotes single quotes", () => {
    expect(execFileSync("bash", ["-c", `printf %s ${shellWord("a'b c")}`], { encoding: "utf8" })).toBe(
      "a'b c",
    );
  });
});
