/**
 * Edits of one value in a JSON text that touch nothing else: the rest of the file (layout, one-line
 * objects, comments) stays byte for byte, and what is written in follows the file's style.
 */
import { createScanner, type Node, SyntaxKind } from "jsonc-parser";
import type { JsonStyle } from "./json-document.js";

/** `value` written in, on one line (`indent` null) or over several lines starting at `indent`. */
export function renderJson(value: unknown, style: JsonStyle, indent: string | null): string {
  if (indent === null || !isFilledContainer(value)) return inline(value, style.spaced);
  return JSON.stringify(value, null, style.unit)
    .split("\n")
    .join(style.eol + indent);
}

/** Replaces a value node (or the root) with `value`. */
export function replaceValue(body: string, node: Node, value: unknown, style: JsonStyle): string {
  const container = containerOf(node);
  const spread =
    spans(body, node) || (isFilledContainer(value) && (container ? spans(body, container) : false));
  const text = renderJson(value, style, spread ? lineIndent(body, node.offset) : null);
  return splice(body, node.offset, node.offset + node.length, text);
}

/** Appends an item to an array node, or a `key` to an object node, after its last child. */
export function appendChild(
  body: string,
  container: Node,
  value: unknown,
  style: JsonStyle,
  key?: string,
): string {
  const children = container.children ?? [];
  const last = children[children.length - 1];
  const sep = style.spaced ? " " : "";
  const entryAt = (indent: string | null) =>
    (key === undefined ? "" : `${JSON.stringify(key)}:${sep}`) + renderJson(value, style, indent);
  const open = container.offset;
  const close = container.offset + container.length - 1;
  if (last === undefined) {
    const inside = body.slice(open + 1, close);
    const spread = body.includes("\n") && inside.trim() === "";
    if (!spread) return splice(body, open + 1, open + 1, entryAt(null));
    const indent = lineIndent(body, open);
    const entry = entryAt(indent + style.unit);
    return splice(body, open + 1, close, `${style.eol}${indent}${style.unit}${entry}${style.eol}${indent}`);
  }
  const lastEnd = last.offset + last.length;
  if (!spans(body, container)) {
    return splice(body, lastEnd, lastEnd, `,${sep}${entryAt(null)}`);
  }
  const indent = lineIndent(body, last.offset);
  const entry = entryAt(indent);
  const trailing = commaAfter(body, lastEnd, close);
  const lineEnd = endOfLine(body, lastEnd);
  // A comment at the end of the last child's line stays with that child.
  const restIsComment =
    trailing === undefined && /^\s*(\/\/.*|\/\*.*\*\/\s*)?\r?$/.test(body.slice(lastEnd, lineEnd));
  if (trailing !== undefined) {
    const after = endOfLine(body, trailing + 1);
    const rest = body.slice(trailing + 1, after);
    const at = /^\s*(\/\/.*|\/\*.*\*\/\s*)?\r?$/.test(rest) ? trimCr(body, after) : trailing + 1;
    return splice(body, at, at, `${style.eol}${indent}${entry},`);
  }
  if (restIsComment) {
    const at = trimCr(body, lineEnd);
    return splice(splice(body, at, at, `${style.eol}${indent}${entry}`), lastEnd, lastEnd, ",");
  }
  return splice(body, lastEnd, lastEnd, `,${style.eol}${indent}${entry}`);
}

/** Removes child `index` of an object (a property) or array (an item), with its comma. */
export function removeChild(body: string, container: Node, index: number): string {
  const children = container.children ?? [];
  const child = children[index] as Node;
  const childEnd = child.offset + child.length;
  const close = container.offset + container.length - 1;
  const trailing = commaAfter(body, childEnd, close);
  if (children.length === 1) {
    const inside = body.slice(container.offset + 1, close);
    const others = inside.replace(
      body.slice(child.offset, trailing === undefined ? childEnd : trailing + 1),
      "",
    );
    if (others.trim() === "") return splice(body, container.offset + 1, close, "");
    return splice(body, child.offset, trailing === undefined ? childEnd : trailing + 1, "");
  }
  const ownLine = startsLine(body, child.offset);
  const start = ownLine ? lineStart(body, child.offset) : child.offset;
  const next = children[index + 1];
  if (next !== undefined) {
    const end = ownLine && startsLine(body, next.offset) ? lineStart(body, next.offset) : next.offset;
    return splice(body, start, end, "");
  }
  if (trailing !== undefined) {
    // JSONC's trailing comma: the comma goes with the child, the one before it stays.
    const after = endOfLine(body, trailing + 1);
    const end =
      ownLine && body.slice(trailing + 1, after).trim() === "" ? nextLineStart(body, after) : trailing + 1;
    return splice(body, start, end, "");
  }
  const previous = children[index - 1] as Node;
  const comma = commaAfter(body, previous.offset + previous.length, child.offset) as number;
  // From the end of the line before (keeping a comment there), or from the comma when on one line.
  const from = ownLine
    ? lineStart(body, child.offset) - eolBefore(body, lineStart(body, child.offset))
    : comma;
  const removed = splice(body, from, childEnd, "");
  return from > comma ? splice(removed, comma, comma + 1, "") : removed;
}

/** The object or array that holds a value node (through its property for an object). */
function containerOf(node: Node): Node | undefined {
  const parent = node.parent;
  return parent?.type === "property" ? parent.parent : parent;
}

function isFilledContainer(value: unknown): boolean {
  if (Array.isArray(value)) return value.length > 0;
  return value !== null && typeof value === "object" && Object.keys(value).length > 0;
}

/** One-line JSON, `{"a": 1, "b": [2, 3]}` when spaced, as JSON.stringify writes it otherwise. */
function inline(value: unknown, spaced: boolean): string {
  if (!spaced) return JSON.stringify(value);
  if (Array.isArray(value)) return `[${value.map((v) => inline(v, spaced)).join(", ")}]`;
  if (value !== null && typeof value === "object") {
    const entries = Object.entries(value).map(([k, v]) => `${JSON.stringify(k)}: ${inline(v, spaced)}`);
    return `{${entries.join(", ")}}`;
  }
  return JSON.stringify(value);
}

function spans(body: string, node: Node): boolean {
  return body.slice(node.offset, node.offset + node.length).includes("\n");
}

/** The offset of the first comma between `from` and `to`, skipping whitespace and comments. */
function commaAfter(body: string, from: number, to: number): number | undefined {
  const scanner = createScanner(body.slice(from, to), true);
  for (let kind = scanner.scan(); kind !== SyntaxKind.EOF; kind = scanner.scan()) {
    if (kind === SyntaxKind.CommaToken) return from + scanner.getTokenOffset();
    if (kind !== SyntaxKind.LineCommentTrivia && kind !== SyntaxKind.BlockCommentTrivia) return undefined;
  }
  return undefined;
}

function lineStart(body: string, offset: number): number {
  return body.lastIndexOf("\n", offset - 1) + 1;
}

function startsLine(body: string, offset: number): boolean {
  return body.slice(lineStart(body, offset), offset).trim() === "";
}

function lineIndent(body: string, offset: number): string {
  const start = lineStart(body, offset);
  return /^[ \t]*/.exec(body.slice(start, offset))?.[0] ?? "";
}

/** The offset of the "\n" ending the line at `offset` (or the end of the text). */
function endOfLine(body: string, offset: number): number {
  const newline = body.indexOf("\n", offset);
  return newline === -1 ? body.length : newline;
}

function nextLineStart(body: string, newline: number): number {
  return Math.min(body.length, newline + 1);
}

/** Steps back over the "\r" of a CRLF ending at `newline`. */
function trimCr(body: string, newline: number): number {
  return newline > 0 && body[newline - 1] === "\r" ? newline - 1 : newline;
}

/** Length of the line ending just before `start` (1 for "\n", 2 for "\r\n", 0 at the top). */
function eolBefore(body: string, start: number): number {
  if (start === 0) return 0;
  return body[start - 2] === "\r" ? 2 : 1;
}

function splice(body: string, from: number, to: number, text: string): string {
  return body.slice(0, from) + text + body.slice(to);
}
