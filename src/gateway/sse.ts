/**
 * An incremental reader of server-sent events: feed it chunks as they arrive (split anywhere), get
 * back the `data` of each complete event. Only what usage accounting needs: `data` lines joined.
 */
export class SseReader {
  private pending = "";

  /** Returns the data of every event completed by this chunk. */
  push(chunk: string): string[] {
    this.pending += chunk;
    const events: string[] = [];
    for (;;) {
      const end = /\r?\n\r?\n/.exec(this.pending);
      if (!end) break;
      const block = this.pending.slice(0, end.index);
      this.pending = this.pending.slice(end.index + end[0].length);
      const data = dataOf(block);
      if (data !== undefined) events.push(data);
    }
    return events;
  }

  /** The data of a last event not followed by a blank line, if any. */
  flush(): string[] {
    const data = dataOf(this.pending);
    this.pending = "";
    return data === undefined ? [] : [data];
  }
}

function dataOf(block: string): string | undefined {
  const lines = block
    .split(/\r?\n/)
    .filter((line) => line.startsWith("data:"))
    .map((line) => line.slice(5).replace(/^ /, ""));
  return lines.length > 0 ? lines.join("\n") : undefined;
}

/** One SSE event carrying JSON (or a literal such as `[DONE]`). */
export function sseEvent(data: unknown, event?: string): string {
  const text = typeof data === "string" ? data : JSON.stringify(data);
  return `${event ? `event: ${event}\n` : ""}data: ${text}\n\n`;
}
