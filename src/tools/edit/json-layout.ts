/** How a JSON file is laid out, so a rewrite can keep it. */
export interface JsonLayout {
  /** What JSON.stringify gets as `space`: a tab, a number of spaces, or 0 for one compact line. */
  readonly indent: string | number;
  readonly eol: "\n" | "\r\n";
  readonly trailingNewline: boolean;
  readonly bom: boolean;
}

/**
 * Reads the layout from a JSON text: the indent of the first indented line (tab or N spaces;
 * 2 when the text is multi-line but not indented), compact when the value is on one line.
 */
export function detectJsonLayout(text: string): JsonLayout {
  const bom = text.charCodeAt(0) === 0xfeff;
  const body = bom ? text.slice(1) : text;
  const trimmed = body.trimEnd();
  const trailingNewline = body.slice(trimmed.length).includes("\n");
  const eol = /\r\n/.test(body) && !/(?<!\r)\n/.test(body) ? "\r\n" : "\n";
  if (!trimmed.trim().includes("\n")) return { indent: 0, eol, trailingNewline, bom };
  const indented = /\n([ \t]+)\S/.exec(trimmed);
  let indent: string | number = 2;
  if (indented !== null) {
    const lead = indented[1] as string;
    indent = lead.startsWith("\t") ? "\t" : Math.min(lead.length, 10);
  }
  return { indent, eol, trailingNewline, bom };
}

/** Serialises `value` in `layout`. */
export function formatJson(value: unknown, layout: JsonLayout): string {
  let out = JSON.stringify(value, null, layout.indent);
  // JSON.stringify escapes newlines inside strings, so every raw "\n" here is structural.
  if (layout.eol === "\r\n") out = out.replaceAll("\n", "\r\n");
  if (layout.trailingNewline) out += layout.eol;
  return layout.bom ? `\ufeff${out}` : out;
}
