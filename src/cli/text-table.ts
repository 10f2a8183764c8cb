/** Rows of cells as columns padded to their widest cell, two spaces apart; the first row is the header. */
export function textTable(rows: readonly (readonly string[])[]): string {
  if (rows.length === 0) return "";
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
