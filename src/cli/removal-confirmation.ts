/**
 * A confirmation before removing boxes beyond this state directory's orphans (another state
 * directory's boxes, a live session's): y/N on a terminal, `--yes` where there is none. Without
 * either, nothing is removed and the refusal says what would have been and how to confirm.
 */
import { createInterface } from "node:readline/promises";
import { FlagError } from "../util/errors.js";
import { terminalLine } from "../util/terminal-text.js";
import { confirmationStreams } from "./terminal-out.js";

export interface ConfirmationIo {
  input: NodeJS.ReadableStream & { isTTY?: boolean };
  output: NodeJS.WritableStream & { isTTY?: boolean };
}

/**
 * Whether to go on removing `lines` (one per box, already worded). True at once with `yes`; asks
 * on a terminal (only "y" or "yes" goes on); throws a FlagError (exit 2) without a terminal.
 */
export async function confirmRemoval(
  lines: readonly string[],
  yes: boolean | undefined,
  command: string,
  io: ConfirmationIo = confirmationStreams(),
): Promise<boolean> {
  if (yes || lines.length === 0) return true;
  // Each line names a box's labels and state directory: text a box's maker chose.
  const list = lines.map((line) => `  ${terminalLine(line)}\n`).join("");
  if (!io.input.isTTY || !io.output.isTTY) {
    throw new FlagError(
      "--yes",
      `nothing removed: this would remove ${lines.length} box(es) beyond this state directory's orphans:\n${list}` +
        `confirm with ${command} --yes (there is no terminal to ask on)`,
    );
  }
  io.output.write(`this removes ${lines.length} box(es) beyond this state directory's orphans:\n${list}`);
  const prompt = createInterface({ input: io.input, output: io.output });
  try {
    const answer = await prompt.question("remove them? [y/N] ");
    return /^y(es)?$/i.test(answer.trim());
  } finally {
    prompt.close();
  }
}
