/**
 * Scripts drydock runs in a box, kept as files of their own under src/ (`*.sh`, checked by
 * shellcheck: scripts/check-box-code.sh) rather than in TypeScript strings, and shipped in the
 * npm package beside dist/ (package.json `files`). A file's first lines starting with `#` (its
 * shebang, shellcheck directives, what it does) are for the reader: the script sent into the box
 * is what follows them, byte for byte, with each `@@NAME@@` replaced by the value the caller gives.
 */
import { readFileSync } from "node:fs";

const cache = new Map<string, string>();

/** The script in `src/<path>`, its header left out and its placeholders filled in. */
export function boxScript(path: string, values: Record<string, string | number> = {}): string {
  let text = cache.get(path);
  if (text === undefined) {
    // From src/util/ and dist/util/ alike: the repository's (or the package's) src/.
    const raw = readFileSync(new URL(`../../src/${path}`, import.meta.url), "utf8");
    const lines = raw.split("\n");
    let at = 0;
    while (at < lines.length && lines[at]!.startsWith("#")) at++;
    text = lines.slice(at).join("\n");
    cache.set(path, text);
  }
  const used = new Set<string>();
  const filled = text.replace(/@@([A-Z_][A-Z0-9_]*)@@/g, (_, name: string) => {
    if (!(name in values)) throw new Error(`${path}: no value for @@${name}@@`);
    used.add(name);
    return String(values[name]);
  });
  const unused = Object.keys(values).filter((name) => !used.has(name));
  if (unused.length > 0) throw new Error(`${path}: @@${unused[0]}@@ is not in the script`);
  return filled;
}
