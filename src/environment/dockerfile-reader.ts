/**
 * Reads a repository's Dockerfile into instructions drydock can check and write again, refusing
 * whatever it cannot read exactly. Pure.
 *
 * Two readers read the file and must agree: dockerfile-ast (a maintained parser, for directives,
 * heredocs, where each instruction starts and ends, its keyword and its flags) and the lines
 * below, which join an instruction the way the engine's builder does (its escape character,
 * continuation lines, comments and blank lines inside them). dockerfile-ast alone keeps a
 * comment inside a continuation as part of the arguments, which the builder drops, so the join
 * is done here and the parser is the cross-check: an instruction the two read differently is
 * refused, not guessed at. Nothing here decides what the builder runs: the builder gets the file
 * dockerfile-writer.ts writes from these instructions, never the repository's own.
 *
 * Refused, with the line and the fix: parser directives other than a first-line `# escape=\`
 * (so `# syntax=` frontends, `# escape=`` and unknown ones), control characters (a carriage
 * return other than in CRLF, VT, FF, NUL, NEL, line and paragraph separators, a BOM), bytes that
 * are not UTF-8, heredocs, unknown instructions, ONBUILD, flags drydock does not know or cannot
 * read plainly, and a continuation at the end of the file.
 */
import { DockerfileParser, type Instruction } from "dockerfile-ast";

export interface DockerfileFlag {
  name: string;
  value: string;
}

/** One instruction as the builder reads it: keyword, flags, and the rest of its (joined) line. */
export interface DockerfileInstruction {
  /** 1-based line where it starts. */
  line: number;
  /** Upper case. */
  keyword: string;
  flags: DockerfileFlag[];
  /** What follows the flags, on one line, trimmed. */
  args: string;
}

/** Something drydock cannot read exactly, or does not check. */
export interface DockerfileProblem {
  line: number;
  problem: string;
  /** What to change, when it is not the general advice. */
  fix?: string;
}

export interface DockerfileReading {
  instructions: DockerfileInstruction[];
  problems: DockerfileProblem[];
}

/** The instructions the engine's builder runs, with the flags drydock knows for each. */
export const KNOWN_INSTRUCTIONS: Readonly<Record<string, readonly string[]>> = {
  FROM: [],
  RUN: [],
  CMD: [],
  LABEL: [],
  MAINTAINER: [],
  EXPOSE: [],
  ENV: [],
  ADD: ["chown"],
  COPY: ["from", "chown"],
  ENTRYPOINT: [],
  VOLUME: [],
  USER: [],
  WORKDIR: [],
  ARG: [],
  STOPSIGNAL: [],
  HEALTHCHECK: ["interval", "timeout", "start-period", "retries"],
  SHELL: [],
};

/**
 * Bounds on what the parser is given: it takes time quadratic in a line's flags (a 256 KiB line
 * of them, 3.6 s), and real Dockerfiles hold a few dozen instructions of a few KiB at most.
 */
export const MAX_INSTRUCTIONS = 1_000;
export const MAX_INSTRUCTION_CHARS = 65_536;

/** A flag's value drydock writes back as it is: no quotes, escapes, spaces or other bytes to read twice. */
const FLAG_VALUE = /^[A-Za-z0-9._:/@${}+-]+$/;
const FLAG_NAME = /^[a-z][a-z-]*$/;
/** A comment with the shape of a parser directive (`# name=value`), which some builder may honour. */
const DIRECTIVE_SHAPE = /^#[ \t]*[A-Za-z][A-Za-z0-9_-]*[ \t]*=/;
/** The one directive drydock accepts: the default escape character, said again. */
const PLAIN_ESCAPE = /^#[ \t]*escape[ \t]*=[ \t]*\\[ \t]*$/i;
/**
 * Characters that make two readers split lines or words differently: C0 controls but tab and
 * newline (a CR is allowed only in CRLF), DEL, C1 controls (NEL), line and paragraph separators,
 * the BOM, and the replacement character (the file was not UTF-8).
 */
const CONTROL = /[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\ufeff\ufffd]/;

const CONTROL_NAMES: Record<string, string> = {
  "\r": "a carriage return (CR) that does not end a line",
  "\x0b": "a vertical tab (VT)",
  "\x0c": "a form feed (FF)",
  "\x00": "a NUL byte",
  "\x85": "a next-line character (NEL)",
  "\u2028": "a line separator (U+2028)",
  "\u2029": "a paragraph separator (U+2029)",
  "\ufeff": "a byte-order mark",
  "\ufffd": "bytes that are not UTF-8",
};

function describeControl(c: string): string {
  return (
    CONTROL_NAMES[c] ??
    `the control character U+${c.codePointAt(0)!.toString(16).toUpperCase().padStart(4, "0")}`
  );
}

// Scans rather than regular expressions with a trailing `[ \t]*$`, which take time quadratic in
// a line of many blanks (a 256 KiB line of spaces took minutes).
const isBlankChar = (c: string | undefined) => c === " " || c === "\t";

/** Where the text ends once trailing spaces and tabs are dropped. */
function blankEnd(text: string): number {
  let end = text.length;
  while (end > 0 && isBlankChar(text[end - 1])) end--;
  return end;
}

function trimBlanks(text: string): string {
  let start = 0;
  while (start < text.length && isBlankChar(text[start])) start++;
  return text.slice(start, Math.max(start, blankEnd(text)));
}

/**
 * The line without its continuation (the escape character, then only blanks to the end of the
 * line, as the builder reads one), or undefined when it does not continue.
 */
export function withoutContinuation(line: string): string | undefined {
  const end = blankEnd(line);
  return line[end - 1] === "\\" ? line.slice(0, end - 1) : undefined;
}
const isBlank = (line: string) => /^[ \t]*$/.test(line);
const isComment = (line: string) => /^[ \t]*#/.test(line);

interface Joined {
  start: number;
  end: number;
  text: string;
}

/** Joins each instruction's lines as the builder does (0-based line numbers). */
function joinLines(lines: string[], problems: DockerfileProblem[]): Joined[] {
  const out: Joined[] = [];
  let i = 0;
  while (i < lines.length) {
    const first = lines[i]!;
    if (isBlank(first) || isComment(first)) {
      i++;
      continue;
    }
    const start = i;
    let text = "";
    let current = trimBlanks(first);
    let end = i;
    for (;;) {
      const cut = withoutContinuation(current);
      if (cut === undefined) {
        text += current;
        break;
      }
      text += cut;
      let next = end + 1;
      // Comment and blank lines inside a continued instruction are dropped, as the builder drops them.
      while (next < lines.length && (isBlank(lines[next]!) || isComment(lines[next]!))) next++;
      if (next >= lines.length) {
        problems.push({
          line: start + 1,
          problem: "the instruction ends with a continuation (\\) at the end of the file",
          fix: "remove the trailing \\",
        });
        end = lines.length - 1;
        break;
      }
      current = lines[next]!;
      end = next;
    }
    out.push({ start, end, text: trimBlanks(text) });
    i = end + 1;
  }
  return out;
}

/** Splits `KEYWORD --flag=value ... rest` the way the builder does for the text drydock accepts. */
function splitInstruction(text: string): { keyword: string; flagWords: string[]; args: string } {
  // Words are split at spaces and tabs only: no other character separates words for every reader.
  let at = 0;
  const word = () => {
    const from = at;
    while (at < text.length && !isBlankChar(text[at])) at++;
    const found = text.slice(from, at);
    while (at < text.length && isBlankChar(text[at])) at++;
    return found;
  };
  const keyword = word();
  const flagWords: string[] = [];
  while (text.startsWith("--", at)) flagWords.push(word());
  return { keyword, flagWords, args: trimBlanks(text.slice(at)) };
}

function astFlags(instruction: Instruction): DockerfileFlag[] | undefined {
  const withFlags = instruction as Instruction & {
    getFlags?: () => Array<{ getName(): string; getValue(): string | null }>;
  };
  if (typeof withFlags.getFlags !== "function") return undefined;
  return withFlags.getFlags().map((f) => ({ name: f.getName(), value: f.getValue() ?? "" }));
}

function astHeredocs(instruction: Instruction): number {
  const withHeredocs = instruction as Instruction & { getHeredocs?: () => unknown[] };
  return typeof withHeredocs.getHeredocs === "function" ? withHeredocs.getHeredocs().length : 0;
}

/** The file's instructions, and every reason drydock cannot take it as it is. */
export function readDockerfile(text: string): DockerfileReading {
  const problems: DockerfileProblem[] = [];
  // CRLF is read the same by every reader (the builder drops a CR before LF); a CR anywhere else is not.
  const lines = text.split("\n").map((l) => (l.endsWith("\r") ? l.slice(0, -1) : l));
  lines.forEach((line, i) => {
    const bad = CONTROL.exec(line);
    if (bad) {
      problems.push({
        line: i + 1,
        problem: `holds ${describeControl(bad[0])}, which the builder and drydock's check could read differently`,
        fix: "save the Dockerfile as UTF-8 text with LF (or CRLF) line endings and no other control characters",
      });
    }
  });
  if (problems.length > 0) return { instructions: [], problems };

  // Directives: only the top of the file may hold them, and only the plain default escape is read.
  for (let i = 0; i < lines.length && (isBlank(lines[i]!) || isComment(lines[i]!)); i++) {
    const line = lines[i]!.replace(/^[ \t]+/, "");
    if (!DIRECTIVE_SHAPE.test(line)) continue;
    if (i === 0 && PLAIN_ESCAPE.test(line)) continue;
    const escape = /^#[ \t]*escape[ \t]*=/i.test(line);
    problems.push({
      line: i + 1,
      problem: escape
        ? `the parser directive ${JSON.stringify(line)} is refused: drydock reads only the default escape character \\`
        : `the parser directive ${JSON.stringify(line)} is refused: drydock reads no parser directives (no # syntax= frontend: the engine's own builder builds the file drydock writes)`,
      fix: escape
        ? "remove the directive and continue lines with \\"
        : "remove the line (or, if it is a comment, write it below the first instruction)",
    });
  }

  const joined = joinLines(lines, problems);
  if (joined.length > MAX_INSTRUCTIONS) {
    problems.push({
      line: joined[MAX_INSTRUCTIONS]!.start + 1,
      problem: `the Dockerfile holds more than ${MAX_INSTRUCTIONS} instructions`,
      fix: "move work into scripts the Dockerfile copies and runs",
    });
  }
  const long = joined.find((j) => j.text.length > MAX_INSTRUCTION_CHARS);
  if (long) {
    problems.push({
      line: long.start + 1,
      problem: `the instruction is longer than ${MAX_INSTRUCTION_CHARS} characters`,
      fix: "move its work into a script the Dockerfile copies and runs",
    });
  }
  if (problems.length > 0) return { instructions: [], problems };

  const parsed = DockerfileParser.parse(lines.join("\n"));
  const directives = parsed.getDirectives();
  for (const directive of directives) {
    const ok = directive.getName().toLowerCase() === "escape" && directive.getValue() === "\\";
    const line = directive.getRange().start.line + 1;
    if (!ok && !problems.some((p) => p.line === line)) {
      problems.push({ line, problem: `the parser directive ${directive.getName()} is refused` });
    }
  }

  const ast = parsed.getInstructions();
  const instructions: DockerfileInstruction[] = [];
  const disagree = (line: number) =>
    problems.push({
      line,
      problem:
        "drydock cannot read this instruction exactly (the maintained parser and the builder's rules read its extent, keyword or flags differently)",
      fix: "write it plainly: one instruction, its continuation lines ending in \\, no heredoc",
    });
  joined.forEach((j, n) => {
    const line = j.start + 1;
    const { keyword: word, flagWords, args } = splitInstruction(j.text);
    const keyword = word.toUpperCase();
    const other = ast[n];
    if (other && astHeredocs(other) > 0) {
      problems.push({
        line,
        problem: "heredocs (<<EOF) are not read by drydock",
        fix: "put the text in a file of the build context and COPY it, or write it with printf in a RUN",
      });
      return;
    }
    if (keyword === "ONBUILD") {
      problems.push({
        line,
        problem: "ONBUILD is refused: its instruction would run, unchecked, in a later build on this image",
        fix: "write the instruction itself in this Dockerfile (or in the environment's setup)",
      });
      return;
    }
    const known = KNOWN_INSTRUCTIONS[keyword];
    if (!known) {
      problems.push({
        line,
        problem: `${JSON.stringify(word)} is not an instruction drydock reads`,
        fix: `use one of ${Object.keys(KNOWN_INSTRUCTIONS).join(", ")}`,
      });
      return;
    }
    const flags: DockerfileFlag[] = [];
    for (const flagWord of flagWords) {
      const eq = flagWord.indexOf("=");
      const name = eq < 0 ? flagWord.slice(2) : flagWord.slice(2, eq);
      const value = eq < 0 ? "" : flagWord.slice(eq + 1);
      if (!known.includes(name)) {
        const buildKit = keyword === "RUN" && ["mount", "network", "security"].includes(name);
        problems.push({
          line,
          problem: `${keyword} ${flagWord} is refused: drydock checks no --${name || "(empty)"} flag on ${keyword}${buildKit ? " (a BuildKit feature, which the engine's builder does not run)" : ""}`,
          fix: known.length > 0 ? `use only --${known.join(", --")} on ${keyword}` : `remove the flag`,
        });
        continue;
      }
      if (!FLAG_NAME.test(name) || eq < 0 || !FLAG_VALUE.test(value)) {
        problems.push({
          line,
          problem: `${keyword} ${JSON.stringify(flagWord)}: drydock reads only --${name}=value with a plain value (no quotes, escapes or spaces)`,
        });
        continue;
      }
      if (flags.some((f) => f.name === name)) {
        problems.push({ line, problem: `${keyword} gives --${name} twice` });
        continue;
      }
      flags.push({ name, value });
    }
    if (args.startsWith("--")) {
      problems.push({
        line,
        problem: `${keyword}'s arguments start with --, which a builder may read as a flag`,
      });
      return;
    }
    // The maintained parser must read the same instruction: where it starts and ends, its keyword, its flags.
    if (
      !other ||
      other.getRange().start.line !== j.start ||
      other.getRange().end.line !== j.end ||
      other.getKeyword() !== keyword
    ) {
      disagree(line);
      return;
    }
    const theirs = astFlags(other);
    if (theirs !== undefined && JSON.stringify(theirs) !== JSON.stringify(flags)) {
      disagree(line);
      return;
    }
    if (theirs === undefined && flags.length > 0) {
      disagree(line);
      return;
    }
    instructions.push({ line, keyword, flags, args });
  });
  if (ast.length > joined.length) disagree(ast[joined.length]!.getRange().start.line + 1);
  return { instructions, problems };
}
