import { InvalidArgumentError } from "../../util/errors.js";
import { splitLines } from "../edit/text-lines.js";

/** Caps on an extracted body; defaults 200 lines and 64 KiB. */
export interface BodyLimits {
  readonly maxLines?: number;
  readonly maxChars?: number;
}

/** The source of one definition. */
export interface DefinitionBody {
  readonly text: string;
  readonly startLine: number;
  readonly endLine: number;
  /** True when the body went on past the limits and was cut. */
  readonly truncated: boolean;
}

/**
 * The lines of the definition starting at `line` (1-based): up to `end` when ctags gave it, else
 * to the brace that closes the first `{` (C-like languages) or the end of the indented block
 * after a line ending in `:` (Python). A declaration ending in `;` is one statement long.
 */
export function extractBody(
  fileText: string,
  line: number,
  end?: number,
  limits: BodyLimits = {},
): DefinitionBody {
  const maxLines = limits.maxLines ?? 200;
  const maxChars = limits.maxChars ?? 64 * 1024;
  const { lines } = splitLines(fileText);
  if (!Number.isInteger(line) || line < 1 || line > lines.length) {
    throw new InvalidArgumentError(
      "line",
      `${line} is outside the file (${lines.length} lines); the file may have changed since it was indexed`,
    );
  }
  let last = end !== undefined && end >= line ? Math.min(end, lines.length) : guessEnd(lines, line, maxLines);
  let truncated = false;
  if (last - line + 1 > maxLines) {
    last = line + maxLines - 1;
    truncated = true;
  }
  const body = lines.slice(line - 1, last);
  let text = body.join("\n");
  if (text.length > maxChars) {
    text = text.slice(0, maxChars);
    truncated = true;
    last = line + text.split("\n").length - 1;
  }
  return { text, startLine: line, endLine: last, truncated };
}

/** Scans from `line` for the end of the definition; gives up after `maxLines` plus a margin. */
function guessEnd(lines: readonly string[], line: number, maxLines: number): number {
  const limit = Math.min(lines.length, line + maxLines);
  let braces = 0;
  let brackets = 0;
  let opened = false;
  let inBlockComment = false;
  let inTemplate = false;
  for (let n = line; n <= limit; n++) {
    const text = lines[n - 1] ?? "";
    for (let i = 0; i < text.length; i++) {
      const c = text[i] as string;
      if (inBlockComment) {
        if (c === "*" && text[i + 1] === "/") {
          inBlockComment = false;
          i++;
        }
        continue;
      }
      if (inTemplate) {
        if (c === "\\") i++;
        else if (c === "`") inTemplate = false;
        continue;
      }
      if (c === "/" && text[i + 1] === "/") break;
      if (c === "/" && text[i + 1] === "*") {
        inBlockComment = true;
        i++;
        continue;
      }
      if (c === "`") {
        inTemplate = true;
        continue;
      }
      if (c === '"' || c === "'") {
        // A quote closed on the same line is a string; otherwise (a Rust lifetime, a stray
        // apostrophe) it is just a character.
        const close = closingQuote(text, i, c);
        if (close !== -1) i = close;
        continue;
      }
      if (c === "(" || c === "[") brackets++;
      else if (c === ")" || c === "]") brackets = Math.max(0, brackets - 1);
      else if (c === "{" && brackets === 0) {
        braces++;
        opened = true;
      } else if (c === "{") braces++;
      else if (c === "}") {
        braces--;
        if (opened && braces <= 0) return n;
      } else if (c === ";" && !opened && braces === 0 && brackets === 0) return n;
    }
    if (!opened && braces === 0 && brackets === 0 && /:\s*(#.*)?$/.test(text))
      return indentedBlockEnd(lines, line, n, limit);
  }
  return opened ? limit : line;
}

function closingQuote(text: string, start: number, quote: string): number {
  for (let i = start + 1; i < text.length; i++) {
    if (text[i] === "\\") i++;
    else if (text[i] === quote) return i;
  }
  return -1;
}

/** The last line of the block indented under `headerEnd`, trailing blank lines dropped. */
function indentedBlockEnd(lines: readonly string[], line: number, headerEnd: number, limit: number): number {
  const base = indentOf(lines[line - 1] ?? "");
  let last = headerEnd;
  for (let n = headerEnd + 1; n <= limit; n++) {
    const text = lines[n - 1] ?? "";
    if (text.trim().length === 0) continue;
    if (indentOf(text) <= base) break;
    last = n;
  }
  return last;
}

function indentOf(text: string): number {
  const match = /^[ \t]*/.exec(text);
  return (match?.[0] ?? "").replaceAll("\t", "    ").length;
}
