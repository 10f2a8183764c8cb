/**
 * The bash tool's reply text: what a terminal shows (the merged output), then one bracketed line
 * with how the command ended. The status comes last, after everything the command printed, so
 * output that imitates it cannot stand in its place. Pure.
 */
export function bashReplyText(result: Record<string, unknown>): string {
  const parts: string[] = [];
  const output = typeof result.output === "string" ? result.output.replace(/\n$/, "") : "";
  if (output !== "") parts.push(output);
  const ended: string[] = [];
  if (typeof result.exit_code === "number") ended.push(`exit code ${result.exit_code}`);
  else ended.push(result.timed_out === true ? "timed out: the command was stopped" : "stopped");
  if (result.truncated === true) ended.push("output truncated (head and tail kept)");
  if (result.restarted === true) ended.push("new shell");
  parts.push(`[${ended.join("; ")}]`);
  if (typeof result.note === "string" && result.note !== "") parts.push(`[note: ${result.note}]`);
  return parts.join("\n");
}
