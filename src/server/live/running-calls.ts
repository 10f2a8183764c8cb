/**
 * The tool calls under way in this process, each with the last lines it has printed so far: what
 * the live page shows on a call's line while the call runs, before its audit line is written. A
 * call is added when the server's tool wrapper starts it and removed just before its last audit
 * line is written, so a watcher that reads the log first and this second never shows a call as
 * running after its end.
 *
 * Bounded whatever a command prints: the lines come whole and cleaned (the bash tool's progress
 * line splitter, each at most 500 characters), are redacted here like every audit line, and only
 * the last MAX_OUTPUT_TAIL_BYTES of them are kept. The tail is plain text with every control
 * character shown as its symbol (outputTail), like an audit line's output_tail.
 */
import { MAX_OUTPUT_TAIL_BYTES, outputTail, type AuditEntry } from "../../session/audit-entry.js";
import { redactStrings } from "../../session/audit-log.js";
import { redactLogText } from "../../util/log.js";

export class RunningCall {
  /** The call's arguments as its audit lines log them, redacted like them. */
  readonly args: Record<string, unknown>;
  private lines: string[] = [];
  private keptBytes = 0;
  /** Bytes of the whole lines seen so far (cleaned text, newlines included). */
  printedBytes = 0;
  /** Bumped by every line: a watcher sends the tail again only when it changed. */
  version = 0;

  constructor(
    /** When the call started: the `ts` of each of its audit lines. */
    readonly ts: string,
    readonly tool: string,
    readonly client: string,
    /** The call's arguments, summarized as its audit lines log them. */
    args: Record<string, unknown>,
    /** The sessions the call has touched so far (it may name one only once it runs). */
    readonly sessions: () => ReadonlySet<string>,
  ) {
    this.args = redactStrings(args);
  }

  /** One whole line the call printed, cleaned of terminal sequences (redacted here). */
  line(text: string): void {
    const kept = redactLogText(text) + "\n";
    const bytes = Buffer.byteLength(kept);
    this.printedBytes += bytes;
    this.version++;
    this.lines.push(kept);
    this.keptBytes += bytes;
    while (this.keptBytes > MAX_OUTPUT_TAIL_BYTES && this.lines.length > 1) {
      this.keptBytes -= Buffer.byteLength(this.lines.shift()!);
    }
  }

  /** The last MAX_OUTPUT_TAIL_BYTES of what it printed, as plain text; undefined before any. */
  tail(): string | undefined {
    return this.lines.length === 0 ? undefined : outputTail(this.lines.join(""));
  }

  /** The call as an audit line of a running call would read now, with its output so far. */
  entry(session: string, now = Date.now()): AuditEntry {
    const tail = this.tail();
    return {
      ts: this.ts,
      session,
      actor: "agent",
      tool: this.tool,
      args: this.args,
      outcome: { ok: false, running: true, ...(tail === undefined ? {} : { output_tail: tail }) },
      duration_ms: Math.max(0, now - Date.parse(this.ts)),
      output_bytes: tail === undefined ? null : this.printedBytes,
      client: this.client,
    };
  }
}

export class RunningCalls {
  private readonly calls = new Set<RunningCall>();

  add(call: RunningCall): void {
    this.calls.add(call);
  }

  remove(call: RunningCall): void {
    this.calls.delete(call);
  }

  /** The calls under way that touch this session, oldest first. */
  of(session: string): RunningCall[] {
    return [...this.calls].filter((c) => c.sessions().has(session));
  }
}

/** This process's calls under way: the tool wrapper adds them, the live view reads them. */
export const runningCalls = new RunningCalls();
