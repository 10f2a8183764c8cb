/**
 * The one way the command-line verbs print: every text passes `terminalText` (control and bidi
 * characters shown as escapes, newlines and tabs kept) and every JSON `terminalJson`, whoever wrote
 * it, since a verb's text quotes repositories, boxes, task files and errors that may hold them.
 * eslint (`no-restricted-properties`) refuses `process.stdout` / `process.stderr` anywhere else in
 * src/cli, and test/unit/cli/terminal-out-only.test.ts checks the same.
 *
 * Raw on purpose, and only here: `rawOut` / `rawErr` for the bytes that are the product and must
 * stay byte for byte (`drydock run`'s command output; a diff, which `git apply` reads, through
 * `diffOut`, raw only when stdout is not a terminal), and `progressStream` for the eval progress line, which draws its own redraw sequence
 * and escapes every note it prints.
 */
import { terminalJson, terminalText } from "../util/terminal-text.js";

/** Prints `text` on stdout, escaped. */
export function printOut(text: string): void {
  process.stdout.write(terminalText(text));
}

/** Prints `text` on stderr, escaped. */
export function printErr(text: string): void {
  process.stderr.write(terminalText(text));
}

/** Prints `value` as JSON on stdout (indented by `indent`, one line without), then a newline. */
export function printJson(value: unknown, indent?: number): void {
  process.stdout.write(`${terminalJson(value, indent)}\n`);
}

/** Writers for code that takes a stream-like `write`: the same escaping. */
export const terminalOut = { write: (text: string) => printOut(text) };
export const terminalErr = { write: (text: string) => printErr(text) };

/** stdout unescaped: `drydock run --no-diff`'s command output only. */
export const rawOut = { write: (bytes: string | Uint8Array) => process.stdout.write(bytes) };

/**
 * A diff on stdout: byte for byte when stdout is a file or a pipe (`git apply` reads it), escaped
 * when it is a terminal, where the agent's lines would otherwise draw over the hunks a person is
 * reviewing (a CR and a cursor-up hide a line) or write the clipboard (OSC 52).
 */
export const diffOut = {
  write: (bytes: string | Uint8Array) =>
    process.stdout.isTTY
      ? process.stdout.write(
          terminalText(typeof bytes === "string" ? bytes : Buffer.from(bytes).toString("utf8")),
        )
      : process.stdout.write(bytes),
};

/** stderr unescaped: `drydock run`'s command output while its diff takes stdout. */
export const rawErr = { write: (bytes: string | Uint8Array) => process.stderr.write(bytes) };

/** stderr for the eval progress line, which escapes its notes and draws its own redraw. */
export function progressStream(): NodeJS.WriteStream {
  return process.stderr;
}

/** stdin and stderr for the y/N question; the question's lines are escaped before they are asked. */
export function confirmationStreams(): { input: NodeJS.ReadStream; output: NodeJS.WriteStream } {
  return { input: process.stdin, output: process.stderr };
}

/** stdout, to be told when its reader has gone (stdout-closed.ts); nothing is written through it. */
export function stdoutStream(): NodeJS.WriteStream {
  return process.stdout;
}
