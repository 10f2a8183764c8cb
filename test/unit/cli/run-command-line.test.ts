import { execFileSync } from "node:child_process";
import { describe, expect, it } from "vitest";
import { runCommandLine } from "../../../src/cli/run-command-line.js";

/** Runs the line as the session's shell would. */
const bash = (line: string) => {
  try {
    return { status: 0, stdout: execFileSync("bash", ["-c", line], { encoding: "utf8" }) };
  } catch (error) {
    const e = error as { status: number; stdout: string };
    return { status: e.status, stdout: e.stdout };
  }
};

describe("runCommandLine", () => {
  it("keeps one word as a shell line, so pipes and && work", () => {
    expect(runCommandLine(["echo a && echo b | tr a-z A-Z # done"])).toBe(
      "(\necho a && echo b | tr a-z A-Z # done\n)",
    );
    expect(bash(runCommandLine(["echo a && echo b | tr a-z A-Z # done"])).stdout).toBe("a\nB\n");
  });

  it("passes several words to the program exactly as typed", () => {
    const words = ["printf", "[%s]\\n", "echo first; echo second", "it's", "$HOME", "*", "", "a\nb"];
    expect(bash(runCommandLine(words)).stdout).toBe(
      words
        .slice(2)
        .map((w) => `[${w}]\n`)
        .join(""),
    );
  });

  it("leaves plain words unquoted", () => {
    expect(runCommandLine(["id", "-u"])).toBe("(\nid -u\n)");
    expect(runCommandLine(["git", "log", "--format=%h", "src/a.ts"])).toBe(
      "(\ngit log --format=%h src/a.ts\n)",
    );
  });

  it("ends with the code of `exit`, in a subshell of its own", () => {
    expect(bash(`${runCommandLine(["echo x; exit 3"])}; echo "after $?"`)).toEqual({
      status: 0,
      stdout: "x\nafter 3\n",
    });
  });
});
