/** Task ids are "t1", "t2", …: short enough for a model to copy, issued in order, never reused. */
export function formatTaskId(n: number): string {
  return `t${n}`;
}

/** The number inside a task id, or undefined when the string is not one. */
export function parseTaskId(id: string): number | undefined {
  const match = /^t([1-9][0-9]{0,14})$/.exec(id);
  return match ? Number(match[1]) : undefined;
}
