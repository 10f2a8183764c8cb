import { terminalLine } from "../util/terminal-text.js";

/**
 * Rows of cells as columns padded to their widest cell, two spaces apart; the first row is the
 * header. Cells often hold what an agent or a repository wrote (titles, paths, problems): each is
 * one line with its control characters escaped, so none can redraw the table or the terminal.
 */
export function textTable(cellRows: readonly (readonly string[])[]): string {
  if (cellRows.length === 0) return "";
  const rows = cellRows.map((row) => row.map((cell) => terminalLine(cell)));
  const widths = rows[0]!.map((_, column) => Math.max(...rows.map((row) => (row[column] ?? "").length)));
  return (
    rows
      .map((row) =>
        row
          .map((cell, i) => cell.padEnd(widths[i]!))
          .join("  ")
          .trimEnd(),
      )
      .join("\n") + "\n"
  );
}
