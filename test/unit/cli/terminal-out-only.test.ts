/**
 * The command line reaches a terminal only through src/cli/terminal-out.ts: no other file of
 * src/cli names process.stdout or process.stderr, aliases `process`, or uses console (eslint
 * refuses the same). The person's shell (session-shell.ts) passes a terminal through to the box and
 * is the one exception. And what terminal-out prints holds nothing a terminal would act on.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { terminalJson, terminalText } from "../../../src/util/terminal-text.js";

const CLI = join(process.cwd(), "src", "cli");
const EXCEPTIONS = new Set(["terminal-out.ts", "session-shell.ts"]);
const OTHER_PATHS = [
  /\bprocess\s*(\.|\?\.)\s*(stdout|stderr)\b/,
  /\bprocess\s*\[/,
  /\bconsole\s*\./,
  /[=(,]\s*process\s*[;,)]/,
  /\}\s*=\s*process\b/,
  /\bglobalThis\s*(\.|\[)\s*["']?process/,
];
const RAW = /[\x00-\x09\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/;

describe("the one way the command line prints", () => {
  it("no file of src/cli but terminal-out.ts writes to stdout or stderr by another path", () => {
    const offenders: string[] = [];
    for (const name of readdirSync(CLI).filter((n) => n.endsWith(".ts"))) {
      if (EXCEPTIONS.has(name)) continue;
      const text = readFileSync(join(CLI, name), "utf8");
      text.split("\n").forEach((line, i) => {
        if (OTHER_PATHS.some((re) => re.test(line)))
          offenders.push(`src/cli/${name}:${i + 1}: ${line.trim()}`);
      });
    }
    expect(offenders).toEqual([]);
  });

  it("the check sees what it is for", () => {
    for (const line of [
      "process.stdout.write(text);",
      "process?.stderr.write(x)",
      'process["stdout"].write(x)',
      "const { stdout } = process;",
      "const p = process;",
      "console.log(x)",
    ]) {
      expect(
        OTHER_PATHS.some((re) => re.test(line)),
        line,
      ).toBe(true);
    }
    expect(OTHER_PATHS.some((re) => re.test("printOut(text);"))).toBe(false);
  });

  it("escapes text and JSON, and the JSON still reads back as the same value", () => {
    const hostile = "a\x1b]52;c;ZXZpbA==\x07\r\u009b31m\u202e\u2066\u2069\x7f";
    expect(terminalText(`${hostile}\n`)).not.toMatch(RAW);
    const json = terminalJson({ hostile, list: [hostile] }, 2);
    expect(json.replace(/\n/g, "")).not.toMatch(RAW);
    expect(JSON.parse(json)).toEqual({ hostile, list: [hostile] });
  });
});
