import { describe, expect, it } from "vitest";
import { readDockerfile } from "../../../src/environment/dockerfile-reader.js";

const problems = (text: string) => readDockerfile(text).problems.map((p) => `${p.line}: ${p.problem}`);
const read = (text: string) =>
  readDockerfile(text).instructions.map((i) => ({ keyword: i.keyword, flags: i.flags, args: i.args }));

describe("readDockerfile", () => {
  it("reads keywords in any case, tabs as blanks, continuations with comments and blank lines inside", () => {
    const text =
      "from\tbase:1 AS build\ncOpY --chown=1:1\t--from=other:2 \\\n  # a note\n\n   /a /b\nrun echo a\\\n  b \\  \n c\n";
    expect(read(text)).toEqual([
      { keyword: "FROM", flags: [], args: "base:1 AS build" },
      {
        keyword: "COPY",
        flags: [
          { name: "chown", value: "1:1" },
          { name: "from", value: "other:2" },
        ],
        args: "/a /b",
      },
      { keyword: "RUN", flags: [], args: "echo a  b  c" },
    ]);
    expect(readDockerfile(text).instructions.map((i) => i.line)).toEqual([1, 2, 6]);
    expect(problems(text)).toEqual([]);
  });

  it("reads a CRLF file as its LF twin", () => {
    const lf = "FROM a\nCOPY --from=b:1 / /\nRUN x \\\n y\n";
    expect(read(lf.replace(/\n/g, "\r\n"))).toEqual(read(lf));
    expect(problems(lf.replace(/\n/g, "\r\n"))).toEqual([]);
  });

  it("refuses control characters in any line, naming the line", () => {
    const cases: Array<[string, RegExp]> = [
      ["\r", /carriage return \(CR\) that does not end a line/],
      ["\v", /vertical tab/],
      ["\f", /form feed/],
      ["\0", /NUL/],
      ["\x1b", /control character U\+001B/],
      ["\x7f", /control character U\+007F/],
      ["\u0085", /next-line character/],
      ["\u2028", /line separator/],
      ["\u2029", /paragraph separator/],
      ["\ufeff", /byte-order mark/],
      ["\ufffd", /not UTF-8/],
    ];
    for (const [c, message] of cases) {
      const found = readDockerfile(`FROM a\nCOPY${c}--from=b / /\n`);
      expect(found.problems).toHaveLength(1);
      expect(found.problems[0]).toMatchObject({ line: 2, problem: expect.stringMatching(message) });
      // In a comment too: a comment to one reader is an instruction to another.
      expect(readDockerfile(`FROM a\n# note${c}COPY --from=b / /\n`).problems[0]?.line).toBe(2);
    }
  });

  it("accepts only a first-line # escape=\\ among directives", () => {
    expect(problems("# escape=\\\nFROM a\n")).toEqual([]);
    expect(problems("#  ESCAPE = \\ \nFROM a\n")).toEqual([]);
    for (const directive of [
      "# escape=`",
      "# syntax=docker/dockerfile:1",
      "# syntax=a b",
      "# foo=bar",
      "#\tcheck = skip=all",
      "# escape=\\ x",
    ]) {
      expect(problems(`${directive}\nFROM a\n`)[0]).toMatch(/^1: the parser directive .* is refused/);
    }
    // A directive after another line: some builders still read it; refused too.
    expect(problems("# a comment\n# escape=`\nFROM a\n")[0]).toMatch(/^2: the parser directive/);
    expect(problems("# escape=\\\n# escape=\\\nFROM a\n")[0]).toMatch(/^2: the parser directive/);
    // Below the first instruction it is only a comment to every reader.
    expect(problems("FROM a\n# syntax=x\n")).toEqual([]);
  });

  it("refuses heredocs, unknown instructions, ONBUILD and a continuation at the end of the file", () => {
    expect(problems("FROM a\nRUN <<EOF\nCOPY --from=b / /\nEOF\n")[0]).toMatch(/^2: heredocs/);
    expect(problems("FROM a\nCOPY <<-X /f\nx\nX\n")[0]).toMatch(/^2: heredocs/);
    expect(problems("FROM a\nFETCH x\n")[0]).toMatch(/^2: "FETCH" is not an instruction/);
    expect(problems("FROM a\nCOPY\u00a0--from=b / /\n")[0]).toMatch(
      /^2: "COPY\u00a0--from=b" is not an instruction/,
    );
    expect(problems("FROM a\nONBUILD RUN true\n")[0]).toMatch(/^2: ONBUILD is refused/);
    expect(problems("FROM a\nRUN true \\")[0]).toMatch(/^2: the instruction ends with a continuation/);
    expect(problems("FROM a\nRUN true \\\n# only a comment after\n")[0]).toMatch(
      /^2: the instruction ends with a continuation/,
    );
  });

  it("refuses flags drydock does not check, or cannot read plainly", () => {
    const cases: Array<[string, RegExp]> = [
      ["FROM --platform=linux/arm64 a", /^1: FROM --platform=linux\/arm64 is refused/],
      ["FROM a\nCOPY --link / /", /^2: COPY --link is refused/],
      ["FROM a\nCOPY --chmod=755 / /", /^2: COPY --chmod=755 is refused/],
      ["FROM a\nADD --from=b / /", /^2: ADD --from=b is refused/],
      ["FROM a\nADD --checksum=sha256:00 http://x /", /^2: ADD --checksum/],
      ["FROM a\nRUN --network=host true", /^2: RUN --network=host is refused.*BuildKit/],
      ["FROM a\nRUN --security=insecure true", /^2: RUN --security=insecure is refused/],
      ["FROM a\nENV --x=1 A=b", /^2: ENV --x=1 is refused/],
      [
        'FROM a\nCOPY --from="b" / /',
        /^2: COPY "--from=\\"b\\"": drydock reads only --from=value with a plain value/,
      ],
      ["FROM a\nCOPY --fr\\om=b / /", /^2: COPY --fr\\om=b is refused/],
      ["FROM a\nCOPY --from / /", /^2: COPY "--from": drydock reads only/],
      ["FROM a\nCOPY --from=b --from=c / /", /^2: COPY gives --from twice/],
      ["FROM a\nCOPY -- --from=b / /", /^2: COPY -- is refused/],
      ["FROM a\nCOPY --FROM=b / /", /^2: COPY --FROM=b is refused/],
    ];
    for (const [text, message] of cases) expect(problems(`${text}\n`)[0]).toMatch(message);
    expect(read("FROM a\nHEALTHCHECK --interval=5s --retries=3 CMD true\n")[1]).toEqual({
      keyword: "HEALTHCHECK",
      flags: [
        { name: "interval", value: "5s" },
        { name: "retries", value: "3" },
      ],
      args: "CMD true",
    });
  });

  it("answers at once on 256 KiB of blanks, continuations or flags, refusing what is past its bounds", () => {
    const K = 256 * 1024;
    const cases: Array<[string, RegExp | undefined]> = [
      [`FROM a\nRUN${" ".repeat(K)}x\n`, /longer than 65536 characters/],
      [`FROM a\nRUN x \\\n${"  y \\\n".repeat(K / 6)} z\n`, /longer than 65536 characters/],
      [`FROM a\nCOPY ${"--chown=1 ".repeat(K / 10)}/a /b\n`, /longer than 65536 characters/],
      [`FROM a\n${"RUN echo hi\n".repeat(K / 12)}`, /more than 1000 instructions/],
      [`FROM a\nRUN ${"\\ ".repeat(K / 2)}x\n`, /longer than 65536 characters/],
      [`FROM a\nRUN x${" ".repeat(30_000)}\\\n${" ".repeat(30_000)}y\n`, undefined],
    ];
    for (const [text, refusal] of cases) {
      const started = Date.now();
      const found = readDockerfile(text);
      // Regular expressions with a trailing [ \t]*$ took 222 s on the first of these.
      expect(Date.now() - started).toBeLessThan(5_000);
      if (refusal) expect(found.problems[0]?.problem).toMatch(refusal);
      else expect(found.problems).toEqual([]);
    }
  });
});
