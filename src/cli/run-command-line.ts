/**
 * The shell line `drydock run` gives the box from the words after `--`. One word is a shell line
 * as it stands (`drydock run -- 'make && make test'`); several are an argument vector, as after
 * `docker run IMAGE`, each word reaching the program exactly as typed.
 */
import { shellQuote } from "../sandbox/shell-frame.js";

/** Words that need no quotes in bash. */
const PLAIN = /^[A-Za-z0-9_@%+=:,./-]+$/;

/**
 * The line runs in a subshell: `exit 3` (or `set -e` and a failure) ends the command with its
 * code, as it would in `sh -c`, instead of ending the session's persistent shell.
 */
export function runCommandLine(words: readonly string[]): string {
  const line =
    words.length === 1
      ? words[0]!
      : words.map((word) => (PLAIN.test(word) ? word : shellQuote(word))).join(" ");
  return `(\n${line}\n)`;
}
