import { elisionLine, numberLines } from "./numbered-lines.js";
import { splitLines } from "./text-lines.js";

/** Longest snippet before its middle is left out. */
export const SNIPPET_MAX_LINES = 80;

/**
 * A numbered excerpt of `text` around lines startLine..endLine (1-based), with `context` lines
 * either side (default 4). A change longer than 80 lines shows its start and end only.
 */
export function snippetAround(text: string, startLine: number, endLine: number, context = 4): string {
  const { lines } = splitLines(text);
  if (lines.length === 0) return "";
  const last = Math.max(startLine, endLine);
  const from = clamp(startLine - context, 1, lines.length);
  const to = clamp(last + context, from, lines.length);
  const count = to - from + 1;
  if (count <= SNIPPET_MAX_LINES) return numberLines(lines.slice(from - 1, to), from);
  const half = SNIPPET_MAX_LINES / 2;
  const head = numberLines(lines.slice(from - 1, from - 1 + half), from);
  const tailFrom = to - half + 1;
  const tail = numberLines(lines.slice(tailFrom - 1, to), tailFrom);
  return `${head}\n${elisionLine(count - 2 * half)}\n${tail}`;
}

function clamp(n: number, low: number, high: number): number {
  return Math.min(Math.max(n, low), high);
}
