/** Width of the line-number column, as `cat -n` prints it. */
const NUMBER_WIDTH = 6;

/** Formats lines as `cat -n` does: the number right-aligned in six columns, a tab, the line. */
export function numberLines(lines: readonly string[], firstLineNumber: number): string {
  return lines.map((line, i) => `${String(firstLineNumber + i).padStart(NUMBER_WIDTH)}\t${line}`).join("\n");
}

/** A line shown in place of lines left out of a numbered listing. */
export function elisionLine(omitted: number): string {
  return `${"...".padStart(NUMBER_WIDTH)}\t[${omitted} line${omitted === 1 ? "" : "s"} not shown]`;
}
