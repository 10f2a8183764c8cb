/**
 * Git's C-style path quoting (`"a/\303\244 b.txt"`). Names are handled as byte strings: a
 * JavaScript string whose every character is one byte (latin1), so a path compares byte for
 * byte whether git wrote it quoted or raw.
 */
const ESCAPES: Record<string, string> = {
  a: "\x07",
  b: "\b",
  t: "\t",
  n: "\n",
  v: "\v",
  f: "\f",
  r: "\r",
  '"': '"',
  "\\": "\\",
};

const QUOTES: Record<string, string> = Object.fromEntries(Object.entries(ESCAPES).map(([k, v]) => [v, k]));

/**
 * Reads a quoted name starting at `s[0] === '"'`; returns its bytes and the index after the closing
 * quote, or a reason when the quoting is broken.
 */
export function readQuoted(s: string): { value: string; end: number } | { error: string } {
  let value = "";
  for (let k = 1; k < s.length; k++) {
    const c = s[k] ?? "";
    if (c === '"') return { value, end: k + 1 };
    if (c !== "\\") {
      value += c;
      continue;
    }
    const e = s[k + 1] ?? "";
    const octal = s.slice(k + 1, k + 4);
    if (ESCAPES[e] !== undefined) {
      value += ESCAPES[e];
      k++;
    } else if (/^[0-3][0-7][0-7]$/.test(octal)) {
      value += String.fromCharCode(parseInt(octal, 8));
      k += 3;
    } else {
      return { error: `bad escape \\${e} in a quoted path` };
    }
  }
  return { error: "a quoted path is not closed" };
}

/** The bytes of a whole name, quoted or raw; undefined when it starts quoted but is not exactly one quoted string. */
export function unquoteWhole(s: string): string | undefined {
  if (!s.startsWith('"')) return s;
  const q = readQuoted(s);
  return "value" in q && q.end === s.length ? q.value : undefined;
}

/** Quotes a path the way git does with core.quotePath on (bytes >= 0x80 as octal); takes and returns text. */
export function quoteGitPath(path: string): string {
  const bytes = Buffer.from(path, "utf8").toString("latin1");
  let needs = false;
  let out = "";
  for (const c of bytes) {
    const code = c.charCodeAt(0);
    if (QUOTES[c] !== undefined) {
      out += "\\" + QUOTES[c];
      needs = true;
    } else if (code < 0x20 || code >= 0x7f) {
      out += "\\" + code.toString(8).padStart(3, "0");
      needs = true;
    } else {
      out += c;
    }
  }
  return needs ? `"${out}"` : out;
}
